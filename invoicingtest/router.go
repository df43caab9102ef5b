package invoicingtest

import (
	"net/http"
	"sort"
	"strings"
)

// route is one method of one path: the scope it needs and its handler.
type route struct {
	scope   string
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
		paths[path][method] = route{scope, h}
	}

	add("GET", "/invoices", ScopeInvoicesRead, s.listInvoices)
	add("POST", "/invoices", ScopeInvoicesWrite, s.createInvoice)
	add("GET", "/invoices/{id}", ScopeInvoicesRead, s.getInvoice)
	add("GET", "/invoices/{id}/pdf", ScopeInvoicesRead, s.invoicePDF)

	add("GET", "/items", ScopeItemsRead, s.listItems)
	add("POST", "/items", ScopeItemsWrite, s.createItem)
	add("GET", "/items/{id}", ScopeItemsRead, s.getItem)

	add("GET", "/quotes", ScopeQuotesRead, s.listQuotes)
	add("POST", "/quotes", ScopeQuotesWrite, s.createQuote)
	add("GET", "/quotes/{id}", ScopeQuotesRead, s.getQuote)
	add("GET", "/quotes/{id}/pdf", ScopeQuotesRead, s.quotePDF)

	add("GET", "/clients", ScopeClientsRead, s.listClients)
	add("POST", "/clients", ScopeClientsWrite, s.createClient)
	add("GET", "/clients/{id}", ScopeClientsRead, s.getClient)
	add("GET", "/suppliers", ScopeSuppliersRead, s.listSuppliers)
	add("POST", "/suppliers", ScopeSuppliersWrite, s.createSupplier)
	add("GET", "/suppliers/{id}", ScopeSuppliersRead, s.getSupplier)

	add("GET", "/bills", ScopeBillsRead, s.listBills)
	add("POST", "/bills", ScopeBillsWrite, s.createBill)
	add("GET", "/bills/{id}", ScopeBillsRead, s.getBill)

	add("GET", "/accounts", ScopeAccountsRead, s.listAccounts)
	add("GET", "/accounts/{id}", ScopeAccountsRead, s.getAccount)
	add("GET", "/tax-codes", ScopeTaxCodesRead, s.listTaxCodes)
	add("GET", "/tax-codes/{id}", ScopeTaxCodesRead, s.getTaxCode)

	add("GET", "/reports/trial-balance", ScopeReportsRead, s.trialBalance)
	add("GET", "/reports/profit-loss", ScopeReportsRead, s.profitAndLoss)
	add("GET", "/reports/balance-sheet", ScopeReportsRead, s.balanceSheet)

	add("GET", "/bank-accounts", ScopeBankingRead, s.listBankAccounts)
	add("GET", "/bank-transactions", ScopeBankingRead, s.listBankTransactions)
	add("GET", "/bank-transactions/{id}", ScopeBankingRead, s.getBankTransaction)

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
		if err := s.authorize(r, rt.scope); err != nil {
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
