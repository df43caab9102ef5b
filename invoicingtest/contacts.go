package invoicingtest

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Contact is a client or a supplier of the business, as given to AddClient
// and AddSupplier. The API shows id, name, email and phone (plus created_at
// and updated_at); the address appears only in quote webhooks
// (client_address).
type Contact struct {
	// ID is the contact's id; AddClient and AddSupplier generate a UUID when
	// it is empty.
	ID string `json:"id"`
	// Name is required.
	Name string `json:"name"`
	// Email is the primary email address (client_email in quote events).
	Email string `json:"email"`
	// Phone is free text.
	Phone string `json:"phone"`
	// Address is the postal address.
	Address Address `json:",embed"`
}

// Address is a contact's postal address, given to POST /clients and POST
// /suppliers as address and shown in quote events as client_address, both
// {address_line1, address_line2, city, state, postcode, country}.
type Address struct {
	Line1    string `json:"address_line1"`
	Line2    string `json:"address_line2"`
	City     string `json:"city"`
	State    string `json:"state"`
	Postcode string `json:"postcode"`
	Country  string `json:"country"`
}

// AddClient adds a client to the business, as if created in the user
// interface, fires contact.created and returns the client's id. It panics
// when Name is empty or the ID is taken, as these are mistakes in the
// test's setup.
func (s *Server) AddClient(c Contact) string {
	return s.addContact(c, webhooks.ContactTypeClient, "AddClient")
}

// AddSupplier adds a supplier like AddClient adds a client.
func (s *Server) AddSupplier(c Contact) string {
	return s.addContact(c, webhooks.ContactTypeSupplier, "AddSupplier")
}

// addContact adds a client or a supplier (kind) for the helper fn.
func (s *Server) addContact(c Contact, kind webhooks.ContactType, fn string) string {
	s.mu.Lock()
	rec, err := s.insertContact(c, kind)
	var ev event
	if err == nil {
		ev = s.contactCreatedEvent(rec, kind)
	}
	s.mu.Unlock()
	if err != nil {
		panic("invoicingtest: " + fn + ": " + err.detail)
	}
	s.publish(ev)
	return rec.ID
}

// insertContact validates and stores a contact. The caller holds s.mu.
func (s *Server) insertContact(c Contact, kind webhooks.ContactType) (*contact, *apiError) {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return nil, invalid("name is required")
	}
	if c.Email != "" && !strings.Contains(c.Email, "@") {
		return nil, invalid("email must be an email address")
	}
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	rec := &contact{Contact: c, CreatedAt: s.now()}
	tbl := &s.data.clients
	if kind == webhooks.ContactTypeSupplier {
		tbl = &s.data.suppliers
	}
	if !tbl.add(c.ID, rec) {
		return nil, conflict("%s id %s already exists", kind, c.ID)
	}
	return rec, nil
}

// contactRequest is the body of POST /clients and POST /suppliers.
type contactRequest struct {
	Name    string   `json:"name"`
	Email   string   `json:"email"`
	Phone   string   `json:"phone"`
	Address *Address `json:"address"`
}

// contactJSON is a client or supplier as the API shows it.
type contactJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	Phone     string    `json:"phone"`
	CreatedAt datetime  `json:"created_at"`
	UpdatedAt *datetime `json:"updated_at"`
}

func contactView(c *contact) contactJSON {
	return contactJSON{
		ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone,
		CreatedAt: datetime(c.CreatedAt), UpdatedAt: (*datetime)(c.UpdatedAt),
	}
}

// createContact serves POST /clients or /suppliers (kind) and fires
// contact.created.
func (s *Server) createContact(kind webhooks.ContactType) http.HandlerFunc {
	insert := func(req *contactRequest) (*contact, *apiError) {
		c := Contact{Name: req.Name, Email: strings.TrimSpace(req.Email), Phone: req.Phone}
		if req.Address != nil {
			c.Address = *req.Address
		}
		return s.insertContact(c, kind)
	}
	created := func(c *contact) event { return s.contactCreatedEvent(c, kind) }
	return createHandler(s, nil, insert, contactView, created)
}

// contactCreatedEvent builds the contact.created payload. The caller holds
// s.mu.
func (s *Server) contactCreatedEvent(c *contact, kind webhooks.ContactType) event {
	return s.newEvent(webhooks.EventContactCreated, struct {
		ContactID   string               `json:"contact_id"`
		ContactType webhooks.ContactType `json:"contact_type"`
		Name        string               `json:"name"`
		Email       string               `json:"email"`
		CreatedAt   string               `json:"created_at"`
	}{c.ID, kind, c.Name, c.Email, formatTime(c.CreatedAt)})
}

// clientName returns the name of a client, or "" if unknown. The caller
// holds s.mu.
func (s *Server) clientName(id string) string {
	if c := s.data.clients.get(id); c != nil {
		return c.Name
	}
	return ""
}
