package panel

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
)

// The owners' pages (docs/money.md, "Owners, agreements, expenses, payouts"; docs/panel.md
// "Owners"): the account's owners (/api/owner), each owner's payouts (/api/owner-payout), a
// property's management agreements (/api/owner-agreement) and its expenses
// (/api/owner-expense). The forms' fields are named after the resources' JSON paths
// (owner[payout][iban], agreement[monthly_fees][0][amount]), so each violation the service
// answers is shown at its field.

const ownersPath = "/panel/owners"

var (
	ownerKinds     = []string{"person", "company"}
	payoutMethods  = []string{"bank_transfer", "paypal", "other"}
	ownerFields    = []string{"name", "kind", "email", "phone", "address", "tax_id", "language"}
	payoutFields   = []string{"method", "account_holder", "iban", "bic", "account_number", "routing_number", "email", "note"}
	commissionOn   = []string{"rent", "total", "components"}
	components     = []string{"rent", "discounts", "services", "taxes"}
	expenseKinds   = []string{"cleaning", "maintenance", "repairs", "supplies", "utilities", "insurance", "taxes", "other"}
	borneBy        = []string{"owner", "manager"}
	receiptTypes   = []string{"image/jpeg", "image/png", "application/pdf"}
	feeRows        = 3
	decimalPattern = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
)

// listLimit is the most a list answers (its first page): a page shows at most that many
// owners, payouts, agreements or expenses.
const listLimit = 100

// maxReceipt is the largest receipt the service takes (5 MiB decoded).
const maxReceipt = 5 << 20

// ownerItem is an owner as /api/owner answers it: its payout details are write-only,
// answered as whether they are set and a summary ("IBAN •••• 4432").
type ownerItem struct {
	OwnerID, Name, Kind, Email, Phone, Address, TaxID, Language text
	PayoutSet                                                   bool
	PayoutSummary                                               text
}

type payoutItem struct {
	PayoutID, OwnerID, Date, Amount, Currency, Method, Reference text
}

type agreementItem struct {
	AgreementID, InternalCode, PropertyID, OwnerID, StartDate, EndDate, CommissionPercent, CommissionBasis text
	CommissionComponents                                                                                   []string
	MonthlyFees                                                                                            []struct{ Name, Amount text }
}

type receiptInfo struct {
	ContentType, Size text
}

type expenseItem struct {
	ExpenseID, InternalCode, Date, Amount, Category, Description, BorneBy text
	Receipt                                                               *receiptInfo
}

// readOwners reads the account's owners.
func (p *Panel) readOwners(a asker) ([]ownerItem, error) {
	o, err := p.callAs(a, gateway.InterfaceA, "owner", map[string]any{"action": "list", "limit": listLimit})
	if err != nil {
		return nil, err
	}
	if !o.OK {
		return nil, &fiber.Error{Code: max(o.HTTP, 400), Message: o.Message}
	}
	var list []ownerItem
	err = listOf(o.Data, &list)
	return list, err
}

// ownerNames are the owners' names by id.
func ownerNames(list []ownerItem) map[string]string {
	m := map[string]string{}
	for _, o := range list {
		m[string(o.OwnerID)] = string(o.Name)
	}
	return m
}

type ownersData struct {
	Owners                 []ownerItem
	Kinds, Methods         []string
	EditID                 string
	Editing                *ownerItem
	PayoutFields           []string
	DeleteID, DeletingName string
}

// ownerForm is the owners page's state: a form sent (nil values: the stored ones).
type ownerForm struct {
	values, errs map[string]string
	msg          string
	editID       string
}

func (p *Panel) ownersPage(c *fiber.Ctx) error {
	return p.ownersView(c, ownerForm{editID: strings.Clone(c.Query("edit"))})
}

func (p *Panel) ownersView(c *fiber.Ctx, st ownerForm) error {
	list, err := p.readOwners(askerOf(c))
	if err != nil {
		return err
	}
	d := ownersData{Owners: list, Kinds: ownerKinds, Methods: payoutMethods, EditID: st.editID, PayoutFields: payoutFields}
	values := map[string]string{"owner[kind]": "person"}
	if d.EditID != "" {
		for i := range list {
			if string(list[i].OwnerID) == d.EditID {
				d.Editing = &list[i]
			}
		}
		if d.Editing == nil {
			return errNotYours
		}
		e := d.Editing
		values = map[string]string{"owner[name]": string(e.Name), "owner[kind]": string(e.Kind), "owner[email]": string(e.Email),
			"owner[phone]": string(e.Phone), "owner[address]": string(e.Address), "owner[tax_id]": string(e.TaxID), "owner[language]": string(e.Language)}
	}
	if st.values != nil {
		values = st.values
		// Payout details typed are never drawn back into the page.
		for _, f := range payoutFields {
			if f != "method" {
				delete(values, "owner[payout]["+f+"]")
			}
		}
	}
	return p.render(c, "owners", view{Title: "Owners", Session: sessionOf(c), Nav: "owners", Notice: notice(c), Message: st.msg,
		Values: values, Errors: st.errs, Data: d})
}

// parseOwner reads the owner form as the /api/owner owner object: its fields, and the
// payout details when any is typed (left empty on an edit: kept as they are).
func parseOwner(get func(string) string, update bool) (map[string]any, map[string]string) {
	errs := map[string]string{}
	o := map[string]any{}
	for _, f := range ownerFields {
		o[f] = strings.TrimSpace(get("owner[" + f + "]"))
	}
	if o["name"] == "" {
		errs["owner[name]"] = "is required"
	}
	if !slices.Contains(ownerKinds, o["kind"].(string)) {
		errs["owner[kind]"] = "must be one of person, company"
	}
	pay := map[string]any{}
	for _, f := range payoutFields {
		if v := strings.TrimSpace(get("owner[payout][" + f + "]")); v != "" {
			pay[f] = v
		}
	}
	if len(pay) > 0 {
		if m, _ := pay["method"].(string); !slices.Contains(payoutMethods, m) {
			errs["owner[payout][method]"] = "must be one of bank_transfer, paypal, other"
		}
		o["payout"] = pay
	}
	if update {
		id, err := strconv.ParseInt(get("owner[owner_id]"), 10, 64)
		if err != nil || id < 1 {
			errs["owner[owner_id]"] = "must be the id of an owner"
		}
		o["owner_id"] = id
	}
	return o, nilIfEmpty(errs)
}

// ownerAction sends the owners page's forms (do: create, update, delete).
func (p *Panel) ownerAction(c *fiber.Ctx) error {
	f := postValues(c)
	do := f.Get("do")
	get := func(k string) string { return f.Get(k) }
	st := ownerForm{values: map[string]string{}}
	for k := range f {
		if k != csrfField {
			st.values[k] = f.Get(k)
		}
	}
	var body map[string]any
	switch do {
	case "create", "update":
		o, errs := parseOwner(get, do == "update")
		if do == "update" {
			st.editID = f.Get("owner[owner_id]")
		}
		if errs != nil {
			c.Status(fiber.StatusBadRequest)
			st.errs, st.msg = errs, "Nothing was saved: correct the fields marked below."
			return p.ownersView(c, st)
		}
		body = map[string]any{"action": do, "owner": o}
	case "delete":
		id, err := strconv.ParseInt(f.Get("owner[owner_id]"), 10, 64)
		if err != nil || id < 1 {
			return errNotYours
		}
		body = map[string]any{"action": "delete", "owner": map[string]any{"owner_id": id}}
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be create, update or delete"}
	}
	o, err := p.call(c, gateway.InterfaceA, "owner", body)
	if err != nil {
		return err
	}
	if !o.OK {
		if o.HTTP == fiber.StatusNotFound {
			return errNotYours
		}
		c.Status(o.HTTP)
		st.msg, st.errs = o.Message, o.Violations
		if do == "delete" {
			// An owner with agreements or entries is kept (409, naming them): said above the list.
			st.values, st.errs, st.editID = nil, nil, ""
		}
		return p.ownersView(c, st)
	}
	return redirect(c, ownersPath, map[string]string{"create": "created", "update": "saved", "delete": "deleted"}[do])
}

type ownerPageData struct {
	Owner   ownerItem
	Payouts []payoutItem
	Methods []string
}

func ownerID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, errNotYours
	}
	return id, nil
}

func (p *Panel) ownerPage(c *fiber.Ctx) error { return p.ownerView(c, "", nil, nil) }

// ownerView draws an owner's page: the owner and its payouts.
func (p *Panel) ownerView(c *fiber.Ctx, msg string, values, errs map[string]string) error {
	id, err := ownerID(c)
	if err != nil {
		return err
	}
	a := askerOf(c)
	var d ownerPageData
	data, err := p.mustRaw(a, gateway.InterfaceA, "owner", map[string]any{"action": "get", "owner": map[string]any{"owner_id": id}})
	if err != nil {
		return err
	}
	if err := loose(data, &d.Owner); err != nil {
		return err
	}
	if data, err = p.mustRaw(a, gateway.InterfaceA, "owner-payout", map[string]any{"action": "list", "owner_id": id, "limit": listLimit}); err != nil {
		return err
	}
	if err := listOf(data, &d.Payouts); err != nil {
		return err
	}
	d.Methods = payoutMethods
	if values == nil {
		values = map[string]string{"payout[method]": "bank_transfer"}
	}
	return p.render(c, "owner", view{Title: "Owner · " + string(d.Owner.Name), Session: sessionOf(c), Nav: "owners", Notice: notice(c),
		Message: msg, Values: values, Errors: errs, Data: d})
}

// payoutAction records a payout to the owner (do=create) or deletes one (do=delete: the
// ledger reverses it).
func (p *Panel) payoutAction(c *fiber.Ctx) error {
	id, err := ownerID(c)
	if err != nil {
		return err
	}
	f := postValues(c)
	values := map[string]string{}
	for k := range f {
		if k != csrfField {
			values[k] = f.Get(k)
		}
	}
	var body map[string]any
	switch f.Get("do") {
	case "create":
		po := map[string]any{"owner_id": id}
		for _, k := range []string{"date", "amount", "currency", "method", "reference"} {
			if v := strings.TrimSpace(f.Get("payout[" + k + "]")); v != "" {
				po[k] = v
			}
		}
		body = map[string]any{"action": "create", "payout": po}
	case "delete":
		pid, err := strconv.ParseInt(f.Get("payout[payout_id]"), 10, 64)
		if err != nil || pid < 1 {
			return errNotYours
		}
		body = map[string]any{"action": "delete", "payout": map[string]any{"payout_id": pid}}
		values = nil
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be create or delete"}
	}
	o, err := p.call(c, gateway.InterfaceA, "owner-payout", body)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error { return p.ownerView(c, o.Message, values, o.Violations) })
	}
	return redirect(c, fmt.Sprintf("%s/%d", ownersPath, id), map[string]string{"create": "payout", "delete": "deleted"}[f.Get("do")])
}

// agreementsData is a property's Owner tab.
type agreementsData struct {
	Code, Tab    string
	Agreements   []agreementItem
	Owners       []ownerItem
	Names        map[string]string
	Bases        []string
	Components   []string
	FeeRows      int
	EditID       string
	Editing      *agreementItem
	TickedCompon map[string]bool
}

func (p *Panel) agreementsPage(c *fiber.Ctx) error {
	return p.agreementsView(c, strings.Clone(c.Params("code")), strings.Clone(c.Query("edit")), "", nil, nil)
}

func (p *Panel) agreementsView(c *fiber.Ctx, code, editID, msg string, values, errs map[string]string) error {
	a := askerOf(c)
	data, err := p.mustRaw(a, gateway.InterfaceA, "owner-agreement", map[string]any{"action": "list", "internal_code": code, "limit": listLimit})
	if err != nil {
		return err
	}
	d := agreementsData{Code: code, Tab: "owner", Bases: commissionOn, Components: components, FeeRows: feeRows, EditID: editID,
		TickedCompon: map[string]bool{}}
	if err := listOf(data, &d.Agreements); err != nil {
		return err
	}
	if d.Owners, err = p.readOwners(a); err != nil {
		return err
	}
	d.Names = ownerNames(d.Owners)
	if editID != "" {
		for i := range d.Agreements {
			if string(d.Agreements[i].AgreementID) == editID {
				d.Editing = &d.Agreements[i]
			}
		}
		if d.Editing == nil && values == nil {
			return errNotYours
		}
	}
	if values == nil {
		values = map[string]string{"agreement[commission_basis]": "rent"}
		if e := d.Editing; e != nil {
			values = map[string]string{"agreement[owner_id]": string(e.OwnerID), "agreement[start_date]": string(e.StartDate),
				"agreement[end_date]": string(e.EndDate), "agreement[commission_percent]": string(e.CommissionPercent),
				"agreement[commission_basis]": string(e.CommissionBasis)}
			for _, k := range e.CommissionComponents {
				values["agreement[commission_components][]/"+k] = "1"
			}
			for i, f := range e.MonthlyFees {
				values[fmt.Sprintf("agreement[monthly_fees][%d][name]", i)] = string(f.Name)
				values[fmt.Sprintf("agreement[monthly_fees][%d][amount]", i)] = string(f.Amount)
			}
			d.FeeRows = max(feeRows, len(e.MonthlyFees)+1)
		}
	}
	for _, k := range components {
		d.TickedCompon[k] = values["agreement[commission_components][]/"+k] == "1"
	}
	return p.render(c, "agreements", view{Title: "Owner and agreement · " + code, Session: sessionOf(c), Nav: "properties", Notice: notice(c),
		Message: msg, Values: values, Errors: errs, Data: d})
}

// parseAgreement reads the agreement form as the /api/owner-agreement agreement object.
// values is the form as the page draws it again (the components ticked by name).
func parseAgreement(f map[string][]string, code string) (map[string]any, map[string]string, map[string]string) {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	errs := map[string]string{}
	values := map[string]string{}
	ag := map[string]any{"internal_code": code}
	owner, err := strconv.ParseInt(get("agreement[owner_id]"), 10, 64)
	values["agreement[owner_id]"] = get("agreement[owner_id]")
	if err != nil || owner < 1 {
		errs["agreement[owner_id]"] = "choose an owner"
	}
	ag["owner_id"] = owner
	for _, k := range []string{"start_date", "end_date", "commission_percent", "commission_basis"} {
		v := get("agreement[" + k + "]")
		values["agreement["+k+"]"] = v
		if v != "" {
			ag[k] = v
		}
	}
	if ag["start_date"] == nil {
		errs["agreement[start_date]"] = "is required"
	}
	if v := get("agreement[commission_percent]"); v != "" && !decimalPattern.MatchString(v) {
		errs["agreement[commission_percent]"] = "must be a number from 0 to 100"
	}
	if !slices.Contains(commissionOn, get("agreement[commission_basis]")) {
		errs["agreement[commission_basis]"] = "must be one of rent, total, components"
	}
	comps := []string{}
	for _, k := range f["agreement[commission_components][]"] {
		if slices.Contains(components, k) {
			comps = append(comps, k)
			values["agreement[commission_components][]/"+k] = "1"
		}
	}
	if get("agreement[commission_basis]") == "components" {
		ag["commission_components"] = comps
		if len(comps) == 0 {
			errs["agreement[commission_components]"] = "tick at least one component"
		}
	}
	fees := []map[string]any{}
	for i := range 10 {
		name, amount := get(fmt.Sprintf("agreement[monthly_fees][%d][name]", i)), get(fmt.Sprintf("agreement[monthly_fees][%d][amount]", i))
		if name == "" && amount == "" {
			continue
		}
		values[fmt.Sprintf("agreement[monthly_fees][%d][name]", len(fees))] = name
		values[fmt.Sprintf("agreement[monthly_fees][%d][amount]", len(fees))] = amount
		fees = append(fees, map[string]any{"name": name, "amount": amount})
	}
	ag["monthly_fees"] = fees
	if id := get("agreement[agreement_id]"); id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 1 {
			errs["agreement[agreement_id]"] = "must be the id of an agreement"
		}
		ag["agreement_id"] = n
		values["agreement[agreement_id]"] = id
	}
	return ag, nilIfEmpty(errs), values
}

// agreementAction sends the Owner tab's forms (do: save — create, or update with an id —,
// delete).
func (p *Panel) agreementAction(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	f := postValues(c)
	var body map[string]any
	var values map[string]string
	editID := f.Get("agreement[agreement_id]")
	switch f.Get("do") {
	case "save":
		ag, errs, v := parseAgreement(f, code)
		values = v
		if errs != nil {
			c.Status(fiber.StatusBadRequest)
			return p.agreementsView(c, code, editID, "Nothing was saved: correct the fields marked below.", values, errs)
		}
		action := "create"
		if editID != "" {
			action = "update"
		}
		body = map[string]any{"action": action, "agreement": ag}
	case "delete":
		id, err := strconv.ParseInt(editID, 10, 64)
		if err != nil || id < 1 {
			return errNotYours
		}
		body = map[string]any{"action": "delete", "agreement": map[string]any{"agreement_id": id}}
		editID = ""
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be save or delete"}
	}
	o, err := p.call(c, gateway.InterfaceA, "owner-agreement", body)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error { return p.agreementsView(c, code, editID, o.Message, values, o.Violations) })
	}
	ok := "saved"
	if f.Get("do") == "delete" {
		ok = "deleted"
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/owner", ok)
}

// expensesData is a property's Expenses tab.
type expensesData struct {
	Code, Tab  string
	Month      string
	Expenses   []expenseItem
	Categories []string
	BorneBy    []string
}

func (p *Panel) expensesPage(c *fiber.Ctx) error {
	return p.expensesView(c, strings.Clone(c.Params("code")), strings.Clone(c.Query("month")), "", nil, nil)
}

func (p *Panel) expensesView(c *fiber.Ctx, code, month, msg string, values, errs map[string]string) error {
	// A list's filters are members of the body, beside its action (as property list's).
	body := map[string]any{"action": "list", "internal_code": code, "limit": listLimit}
	if from, to := monthRange(month); from != "" {
		body["from"], body["to"] = from, to
	} else {
		month = ""
	}
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "owner-expense", body)
	if err != nil {
		return err
	}
	d := expensesData{Code: code, Tab: "expenses", Month: month, Categories: expenseKinds, BorneBy: borneBy}
	if err := listOf(data, &d.Expenses); err != nil {
		return err
	}
	if values == nil {
		values = map[string]string{"expense[borne_by]": "owner", "expense[category]": "cleaning"}
	}
	values["month"] = month
	return p.render(c, "expenses", view{Title: "Expenses · " + code, Session: sessionOf(c), Nav: "properties", Notice: notice(c),
		Message: msg, Values: values, Errors: errs, Data: d})
}

// expenseAction records an expense (do=create, a multipart form: its receipt goes to the
// resource as base64) or deletes one (do=delete).
func (p *Panel) expenseAction(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	do := c.FormValue("do")
	values := map[string]string{}
	var body map[string]any
	switch do {
	case "create":
		ex := map[string]any{"internal_code": code}
		for _, k := range []string{"date", "amount", "category", "description", "borne_by"} {
			v := strings.TrimSpace(c.FormValue("expense[" + k + "]"))
			values["expense["+k+"]"] = v
			if v != "" {
				ex[k] = v
			}
		}
		if fh, err := c.FormFile("receipt"); err == nil {
			if fh.Size > maxReceipt {
				c.Status(fiber.StatusBadRequest)
				return p.expensesView(c, code, "", "Nothing was saved: correct the fields marked below.", values,
					map[string]string{"receipt": fmt.Sprintf("must be at most %d MiB", maxReceipt>>20)})
			}
			r, err := fh.Open()
			if err != nil {
				return err
			}
			b, err := io.ReadAll(io.LimitReader(r, maxReceipt+1))
			_ = r.Close()
			if err != nil {
				return err
			}
			ct, _, _ := strings.Cut(http.DetectContentType(b), ";")
			ex["receipt"] = map[string]any{"content_type": ct, "data": base64.StdEncoding.EncodeToString(b)}
		}
		body = map[string]any{"action": "create", "expense": ex}
	case "delete":
		id, err := strconv.ParseInt(c.FormValue("expense[expense_id]"), 10, 64)
		if err != nil || id < 1 {
			return errNotYours
		}
		body = map[string]any{"action": "delete", "expense": map[string]any{"expense_id": id}}
		values = nil
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be create or delete"}
	}
	o, err := p.call(c, gateway.InterfaceA, "owner-expense", body)
	if err != nil {
		return err
	}
	if !o.OK {
		errs := map[string]string{}
		for k, v := range o.Violations {
			// The receipt's violations (expense.receipt, expense.receipt.data) at the file input.
			if strings.HasPrefix(k, "expense[receipt]") {
				k = "receipt"
			}
			errs[k] = v
		}
		return refused(c, o, func() error { return p.expensesView(c, code, "", o.Message, values, errs) })
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/expenses", map[string]string{"create": "created", "delete": "deleted"}[do])
}

// expenseReceipt answers an expense's receipt (action receipt): an image shown in the
// browser, a PDF downloaded; only the types the service takes.
func (p *Panel) expenseReceipt(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return errNotYours
	}
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "owner-expense", map[string]any{"action": "receipt", "expense": map[string]any{"expense_id": id}})
	if err != nil {
		return err
	}
	var r struct {
		ContentType text
		Data        text
		Receipt     *struct{ ContentType, Data text }
	}
	if err := loose(data, &r); err != nil {
		return err
	}
	if r.Receipt != nil {
		r.ContentType, r.Data = r.Receipt.ContentType, r.Receipt.Data
	}
	b, err := base64.StdEncoding.DecodeString(string(r.Data))
	if err != nil || len(b) == 0 {
		return errNotYours
	}
	ct := string(r.ContentType)
	ext := map[string]string{"image/jpeg": "jpg", "image/png": "png", "application/pdf": "pdf"}[ct]
	if !slices.Contains(receiptTypes, ct) {
		ct, ext = "application/octet-stream", "bin"
	}
	disp := "inline"
	if !strings.HasPrefix(ct, "image/") {
		disp = "attachment"
	}
	c.Set(fiber.HeaderContentType, ct)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`%s; filename="receipt-%d.%s"`, disp, id, ext))
	return c.Send(b)
}
