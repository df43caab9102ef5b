package invoicingtest

import (
	"net/http"
	"sort"
	"strings"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// route is one method of one path: the scopes it needs and its handler.
type route struct {
	scopes  []string
	handler http.HandlerFunc
}

// handler builds the server's HTTP handler: the API under BasePath, 404 with
// a {detail} body everywhere else, 405 for a known path with another method,
// and in front of everything the fault injector and the request log.
func (s *Server) handler() http.Handler {
	paths := map[string]map[string]route{}
	add := func(method, path, scope string, h http.HandlerFunc) {
		if paths[path] == nil {
			paths[path] = map[string]route{}
		}
		paths[path][method] = route{[]string{scope}, h}
	}

	add("GET", "/invoices", ScopeInvoicesRead, s.listInvoices)
	add("POST", "/invoices", ScopeInvoicesWrite, createHandler(s, s.existingInvoice, s.insertInvoice, s.invoiceView, s.invoiceCreated))
	add("GET", "/invoices/{id}", ScopeInvoicesRead, getHandler(s, &s.data.invoices, "Invoice", s.invoiceView))
	add("GET", "/invoices/{id}/pdf", ScopeInvoicesRead, recordHandler(s, &s.data.invoices, "Invoice", s.invoicePDF, writePDF))

	add("GET", "/items", ScopeItemsRead, listHandler(s, "items", &s.data.items, itemFilter, itemView))
	add("POST", "/items", ScopeItemsWrite, createHandler(s, nil, s.insertItem, itemView, nil)) // API.md 6.1 has no item event
	add("GET", "/items/{id}", ScopeItemsRead, getHandler(s, &s.data.items, "Item", itemView))

	add("GET", "/quotes", ScopeQuotesRead, listHandler(s, "quotes", &s.data.quotes, quoteFilter, s.quoteView))
	add("POST", "/quotes", ScopeQuotesWrite, createHandler(s, nil, s.insertQuote, s.quoteView, s.quoteCreated))
	add("GET", "/quotes/{id}", ScopeQuotesRead, getHandler(s, &s.data.quotes, "Quote", s.quoteView))
	add("GET", "/quotes/{id}/pdf", ScopeQuotesRead, recordHandler(s, &s.data.quotes, "Quote", s.quotePDF, writePDF))

	add("GET", "/clients", ScopeClientsRead, listHandler(s, "clients", &s.data.clients, nil, contactView))
	add("POST", "/clients", ScopeClientsWrite, s.createContact(webhooks.ContactTypeClient))
	add("GET", "/clients/{id}", ScopeClientsRead, getHandler(s, &s.data.clients, "Client", contactView))
	add("GET", "/suppliers", ScopeSuppliersRead, listHandler(s, "suppliers", &s.data.suppliers, nil, contactView))
	add("POST", "/suppliers", ScopeSuppliersWrite, s.createContact(webhooks.ContactTypeSupplier))
	add("GET", "/suppliers/{id}", ScopeSuppliersRead, getHandler(s, &s.data.suppliers, "Supplier", contactView))

	add("GET", "/bills", ScopeBillsRead, listHandler(s, "bills", &s.data.bills, billFilter, s.billView))
	add("POST", "/bills", ScopeBillsWrite, createHandler(s, nil, s.insertBill, s.billView, s.billCreated))
	add("GET", "/bills/{id}", ScopeBillsRead, getHandler(s, &s.data.bills, "Bill", s.billView))

	add("GET", "/accounts", ScopeAccountsRead, listHandler(s, "accounts", &s.data.accounts, accountFilter, accountView))
	add("GET", "/accounts/{id}", ScopeAccountsRead, getHandler(s, &s.data.accounts, "Account", accountView))
	add("GET", "/tax-codes", ScopeTaxCodesRead, listHandler(s, "tax_codes", &s.data.taxCodes, taxCodeFilter, taxCodeView))
	add("GET", "/tax-codes/{id}", ScopeTaxCodesRead, getHandler(s, &s.data.taxCodes, "Tax code", taxCodeView))

	add("GET", "/reports/trial-balance", ScopeReportsRead, s.reportAsAt(trialBalance))
	add("GET", "/reports/profit-loss", ScopeReportsRead, s.profitAndLoss)
	add("GET", "/reports/balance-sheet", ScopeReportsRead, s.reportAsAt(s.balanceSheet))

	add("GET", "/bank-accounts", ScopeBankingRead, listHandler(s, "bank_accounts", &s.data.bankAccounts, nil, s.bankAccountView))
	add("GET", "/bank-transactions", ScopeBankingRead, listHandler(s, "bank_transactions", &s.data.bankTxns, bankTransactionFilter, bankTransactionView))
	add("GET", "/bank-transactions/{id}", ScopeBankingRead, getHandler(s, &s.data.bankTxns, "Bank transaction", bankTransactionView))

	if s.control {
		s.controlRoutes(func(method, path string, h http.HandlerFunc) {
			path = controlPath + path
			if paths[path] == nil {
				paths[path] = map[string]route{}
			}
			paths[path][method] = route{AllScopes(), h}
		})
	}

	mux := http.NewServeMux()
	for path, methods := range paths {
		mux.Handle(BasePath+path, s.dispatch(methods))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{http.StatusNotFound, "Not Found"})
	})
	return s.edge(mux)
}

// dispatch picks the route for the request's method (405 if none), then
// checks the API key and scope before calling the handler.
func (s *Server) dispatch(methods map[string]route) http.Handler {
	allowed := make([]string, 0, len(methods))
	for m := range methods {
		allowed = append(allowed, m)
	}
	sort.Strings(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := methods[r.Method]
		if !ok {
			w.Header().Set("Allow", allow)
			writeError(w, &apiError{http.StatusMethodNotAllowed, "Method Not Allowed"})
			return
		}
		if err := s.authorize(r, rt.scopes...); err != nil {
			writeError(w, err)
			return
		}
		rt.handler(w, r)
	})
}

// edge waits for the request's latency (outside s.mu, so that requests wait
// in parallel; a request whose client went away meanwhile is dropped), then
// answers injected faults before anything else and logs every request.
func (s *Server) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.wait(r.Context()) {
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		f := s.takeFault(r)
		if f != nil {
			f.write(rec)
		} else {
			next.ServeHTTP(rec, r)
		}
		s.logRequest(r, rec.status, f != nil)
	})
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the status before passing it on.
func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
