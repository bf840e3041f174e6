package api

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/owners"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
)

// Interface A's owner resources (docs/money.md, "Owners, agreements, expenses, payouts";
// docs/interface-a.md): /api/owner, /api/owner-agreement, /api/owner-expense and
// /api/owner-payout, which edge forwards to /internal/a/{resource}. The decoders here check
// every field and name it by its JSON path; the owners domain checks the rules of the whole.

// OwnerResources are the interface A resources of the owners domain, as edge names them.
var OwnerResources = []string{"owner", "owner-agreement", "owner-expense", "owner-payout"}

// SetOwners serves the owner resources with o (nil: not served).
func (a *API) SetOwners(o *owners.Service) { a.owners = o }

func (a *API) registerOwners(a1 fiber.Router) {
	if a.owners == nil {
		return
	}
	a1.Post("/owner", a.ownerResource)
	a1.Post("/owner-agreement", a.agreementResource)
	a1.Post("/owner-expense", a.expenseResource)
	a1.Post("/owner-payout", a.payoutResource)
}

// ownersError maps the owners domain's errors to interface A's statuses.
func ownersError(err error) error {
	var nf *owners.NotFoundError
	var ce *owners.ConflictError
	var fe *owners.FieldError
	switch {
	case errors.As(err, &nf):
		return httpapi.NotFound(httpapi.StatusNotFound, nf.Error())
	case errors.As(err, &ce):
		return httpapi.Conflict(httpapi.StatusConflict, ce.Message)
	case errors.As(err, &fe):
		return httpapi.InvalidField(fe.Field, fe.Message)
	}
	return err
}

const maxID = 1 << 53

// Field rules shared by the resources.
var (
	phonePattern    = regexp.MustCompile(`^[0-9+()./ -]*$`)
	languagePattern = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$`)
	bicPattern      = regexp.MustCompile(`^[A-Za-z]{6}[A-Za-z0-9]{2}([A-Za-z0-9]{3})?$`)
	currencyPattern = regexp.MustCompile(`^[A-Za-z]{3}$`)
	accountPattern  = regexp.MustCompile(`^[0-9A-Za-z -]*$`)
	routingPattern  = regexp.MustCompile(`^[0-9 -]*$`)
	ibanPattern     = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]+$`)
	maxAmount       = decimal.NewFromInt(2147483647)
)

// resourceBody reads the body's action, checked against actions.
func resourceBody(c *fiber.Ctx, v *fields.Violations, actions ...string) (*fields.Object, string) {
	o := fields.Parse(c.Body(), "", v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: actions, IgnoreCase: true})
	return o, action
}

// listPage reads list's page and limit (docs/interface-a.md, property list's rules).
type listPage struct{ page, limit int }

func readPage(o *fields.Object) listPage {
	p := listPage{page: 1, limit: 50}
	if n, ok := o.Int("page", fields.Int{Min: 1, Max: 1 << 31}); ok {
		p.page = n
	}
	if n, ok := o.Int("limit", fields.Int{Min: 1, Max: 100}); ok {
		p.limit = n
	}
	return p
}

// pageOf answers the page of items.
// listed answers page p of items, each as answer renders it, under name: an A list answer
// {total, page, limit, <name>}.
func listed[T, A any](c *fiber.Ctx, p listPage, items []T, name string, answer func(T) A) error {
	total, page := pageOf(p, items)
	out := make([]A, len(page))
	for i, x := range page {
		out[i] = answer(x)
	}
	return httpapi.A(c, fiber.Map{"total": total, "page": p.page, "limit": p.limit, name: out})
}

// recordActions are an owner resource's actions on one record (the write W, the record T,
// its answer A): create and update take the decoded write, get and delete the id. run
// answers the record, or {id: n} for a delete; an action without its function (payouts have
// no update) never reaches it, resourceBody having refused it.
type recordActions[W, T, A any] struct {
	create, update func(context.Context, string, W) (T, error)
	get            func(context.Context, string, int64) (T, error)
	del            func(context.Context, string, int64) error
	answer         func(T) A
	id             string // the record's id member ("owner_id")
}

func (r recordActions[W, T, A]) run(c *fiber.Ctx, action string, id int64, w W) error {
	ctx, acct := c.UserContext(), account(c)
	var got T
	var err error
	switch action {
	case "create":
		got, err = r.create(ctx, acct, w)
	case "update":
		got, err = r.update(ctx, acct, w)
	case "get":
		got, err = r.get(ctx, acct, id)
	case "delete":
		if err := r.del(ctx, acct, id); err != nil {
			return ownersError(err)
		}
		return httpapi.A(c, fiber.Map{r.id: id})
	default:
		return fmt.Errorf("owner resource: action %q has no handler", action)
	}
	if err != nil {
		return ownersError(err)
	}
	return httpapi.A(c, r.answer(got))
}

func pageOf[T any](p listPage, items []T) (int, []T) {
	from := min((p.page-1)*p.limit, len(items))
	to := min(from+p.limit, len(items))
	return len(items), items[from:to]
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func amountText(d decimal.Decimal, currency string) string {
	return d.StringFixed(pricing.Scale(currency))
}

// --- owner ---

type ownerAnswer struct {
	OwnerID       int64  `json:"owner_id"`
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	Email         string `json:"email"`
	Phone         string `json:"phone"`
	Address       string `json:"address"`
	TaxID         string `json:"tax_id"`
	Language      string `json:"language"`
	PayoutSet     bool   `json:"payout_set"`
	PayoutSummary string `json:"payout_summary"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
}

func ownerAnswerOf(o owners.Owner) ownerAnswer {
	out := ownerAnswer{OwnerID: o.OwnerID, Name: o.Name, Kind: o.Kind, Email: o.Email, Phone: o.Phone, Address: o.Address, TaxID: o.TaxID,
		Language: o.Language, CreatedAt: stamp(o.CreatedAt), UpdatedAt: stamp(o.UpdatedAt)}
	if o.Payout != nil {
		out.PayoutSet, out.PayoutSummary = true, o.Payout.Summary
	}
	return out
}

// decodeOwner reads an owner's fields (create and update alike: update replaces them).
func decodeOwner(o *fields.Object) owners.OwnerWrite {
	var w owners.OwnerWrite
	w.Name, _ = o.String("name", fields.Str{Required: true, Max: 200})
	w.Kind, _ = o.String("kind", fields.Str{Required: true, OneOf: owners.Kinds, IgnoreCase: true})
	w.Email, _ = o.Email("email", false)
	w.Phone, _ = o.String("phone", fields.Str{Max: 50, Pattern: phonePattern, PatternMsg: "must hold only digits, spaces and + ( ) . / -"})
	w.Address, _ = o.String("address", fields.Str{Max: 500})
	w.TaxID, _ = o.String("tax_id", fields.Str{Max: 50})
	w.Language, _ = o.String("language", fields.Str{Max: 35, Pattern: languagePattern, PatternMsg: "must be a language tag (en, pt-BR)"})
	if cleared(o, "payout") {
		w.ClearPayout = true
		return w
	}
	p := o.Object("payout", false)
	if p == nil {
		return w
	}
	var d owners.PayoutDetails
	d.Method, _ = p.String("method", fields.Str{Required: true, OneOf: owners.PayoutMethods, IgnoreCase: true})
	d.AccountHolder, _ = p.String("account_holder", fields.Str{Max: 200})
	d.IBAN, _ = p.String("iban", fields.Str{Max: 42})
	if d.IBAN != "" && !validIBAN(d.IBAN) {
		p.Add("iban", "must be a valid IBAN (country, check digits and account, 15 to 34 characters)")
	}
	d.BIC, _ = p.String("bic", fields.Str{Pattern: bicPattern, PatternMsg: "must be a BIC of 8 or 11 letters and digits"})
	d.AccountNumber, _ = p.String("account_number", fields.Str{Max: 34, Pattern: accountPattern,
		PatternMsg: "must hold only letters, digits, spaces and -"})
	d.RoutingNumber, _ = p.String("routing_number", fields.Str{Max: 20, Pattern: routingPattern,
		PatternMsg: "must hold only digits, spaces and -"})
	d.Email, _ = p.Email("email", false)
	d.Note, _ = p.String("note", fields.Str{Max: 500})
	switch d.Method {
	case "bank_transfer":
		if d.IBAN == "" && d.AccountNumber == "" && !p.Has("iban") && !p.Has("account_number") {
			p.Add("iban", "is required for a bank_transfer without an account_number")
		}
	case "paypal":
		if d.Email == "" && !p.Has("email") {
			p.Add("email", "is required for paypal")
		}
	}
	w.Details = &d
	return w
}

// cleared reports whether member name was sent as an empty object ({} or PHP's []): the
// stored value is dropped.
func cleared(o *fields.Object, name string) bool {
	k := o.Kind(name)
	return (k == fields.KindObject || k == fields.KindArray) && o.Empty(name)
}

// validIBAN checks an IBAN's form and its ISO 7064 mod-97 check digits (spaces allowed).
func validIBAN(s string) bool {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if len(s) < 15 || len(s) > 34 || !ibanPattern.MatchString(s) {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		if r >= 'A' && r <= 'Z' {
			b.WriteString(strconv.Itoa(int(r-'A') + 10))
		} else {
			b.WriteRune(r)
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

func (a *API) ownerResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "create", "update", "get", "list", "delete")
	ctx, acct := c.UserContext(), account(c)
	if action == "list" {
		p := readPage(o)
		if err := v.Err(); err != nil {
			return err
		}
		all, err := a.owners.Owners(ctx, acct)
		if err != nil {
			return err
		}
		return listed(c, p, all, "owners", ownerAnswerOf)
	}
	ob := o.Object("owner", true)
	var id int
	if action != "create" {
		id, _ = ob.Int("owner_id", fields.Int{Required: true, Min: 1, Max: maxID})
	}
	var w owners.OwnerWrite
	if action == "create" || action == "update" {
		w = decodeOwner(ob)
	}
	if err := v.Err(); err != nil {
		return err
	}
	w.OwnerID = int64(id)
	return recordActions[owners.OwnerWrite, owners.Owner, ownerAnswer]{create: a.owners.CreateOwner, update: a.owners.UpdateOwner,
		get: a.owners.Owner, del: a.owners.DeleteOwner, answer: ownerAnswerOf, id: "owner_id"}.run(c, action, int64(id), w)
}

// --- agreement ---

type feeAnswer struct {
	Name   string `json:"name"`
	Amount string `json:"amount"`
}

type agreementAnswer struct {
	AgreementID          int64       `json:"agreement_id"`
	PropertyID           int64       `json:"property_id"`
	InternalCode         string      `json:"internal_code"`
	OwnerID              int64       `json:"owner_id"`
	StartDate            string      `json:"start_date"`
	EndDate              string      `json:"end_date"`
	CommissionPercent    string      `json:"commission_percent"`
	CommissionBasis      string      `json:"commission_basis"`
	CommissionComponents []string    `json:"commission_components"`
	MonthlyFees          []feeAnswer `json:"monthly_fees"`
	Currency             string      `json:"currency"`
	CreatedAt            string      `json:"created_at"`
	UpdatedAt            string      `json:"updated_at"`
}

func agreementAnswerOf(x owners.Agreement) agreementAnswer {
	out := agreementAnswer{AgreementID: x.AgreementID, PropertyID: x.PropertyID, InternalCode: x.InternalCode, OwnerID: x.OwnerID,
		StartDate: x.StartDate, EndDate: x.EndDate, CommissionPercent: x.CommissionPercent.StringFixed(2), CommissionBasis: x.CommissionBasis,
		CommissionComponents: append([]string{}, x.CommissionComponents...), MonthlyFees: []feeAnswer{}, Currency: x.Currency,
		CreatedAt: stamp(x.CreatedAt), UpdatedAt: stamp(x.UpdatedAt)}
	for _, f := range x.MonthlyFees {
		out.MonthlyFees = append(out.MonthlyFees, feeAnswer{Name: f.Name, Amount: amountText(f.Amount, x.Currency)})
	}
	return out
}

// propertyRef reads internal_code or, without it, property_id.
func propertyRef(o *fields.Object) (string, int64) {
	code, _ := o.String("internal_code", fields.Str{Max: 10})
	if code != "" {
		return code, 0
	}
	pid, ok := o.Int("property_id", fields.Int{Min: 1, Max: maxID})
	if !ok && o.Empty("property_id") {
		o.Add("internal_code", "is required (or property_id)")
	}
	return "", int64(pid)
}

func decodeAgreement(o *fields.Object) owners.Agreement {
	var x owners.Agreement
	x.InternalCode, x.PropertyID = propertyRef(o)
	owner, _ := o.Int("owner_id", fields.Int{Required: true, Min: 1, Max: maxID})
	x.OwnerID = int64(owner)
	start, okS := o.Date("start_date", true)
	end, okE := o.Date("end_date", false)
	if okS {
		x.StartDate = start.Format(time.DateOnly)
	}
	if okE {
		x.EndDate = end.Format(time.DateOnly)
		if okS && end.Before(start) {
			o.Add("end_date", "must not be before start_date")
		}
	}
	x.CommissionPercent, _ = o.Decimal("commission_percent", fields.Dec{Required: true, Max: decimal.NewFromInt(100), MaxScale: 2})
	x.CommissionBasis, _ = o.String("commission_basis", fields.Str{Required: true, OneOf: owners.Bases, IgnoreCase: true})
	comps, sent := o.Strings("commission_components", fields.List{Max: len(owners.Components)},
		fields.Str{OneOf: owners.Components, IgnoreCase: true})
	switch {
	case x.CommissionBasis == "components" && len(comps) == 0 && (!sent || o.Empty("commission_components")):
		o.Add("commission_components", "is required when commission_basis is components: one or more of "+strings.Join(owners.Components, ", "))
	case x.CommissionBasis != "components" && x.CommissionBasis != "" && sent && len(comps) > 0:
		o.Add("commission_components", "must be empty unless commission_basis is components")
	}
	seen := map[string]bool{}
	for _, c := range comps {
		if seen[c] {
			o.Add("commission_components", c+" is listed twice")
		}
		seen[c] = true
	}
	if x.CommissionBasis == "components" {
		// Stored in the order the contract lists them, whatever order was sent.
		for _, c := range owners.Components {
			if seen[c] {
				x.CommissionComponents = append(x.CommissionComponents, c)
			}
		}
	}
	fees, _ := o.Array("monthly_fees", fields.List{Max: owners.MaxFees})
	for _, f := range fees {
		if f == nil {
			continue
		}
		name, _ := f.String("name", fields.Str{Required: true, Max: 100})
		amt, _ := f.Decimal("amount", fields.Dec{Required: true, Positive: true, Max: maxAmount, MaxScale: 3})
		x.MonthlyFees = append(x.MonthlyFees, owners.Fee{Name: name, Amount: amt})
	}
	return x
}

func (a *API) agreementResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "create", "update", "get", "list", "delete")
	ctx, acct := c.UserContext(), account(c)
	if action == "list" {
		p := readPage(o)
		owner, _ := o.Int("owner_id", fields.Int{Min: 1, Max: maxID})
		code, _ := o.String("internal_code", fields.Str{Max: 10})
		if err := v.Err(); err != nil {
			return err
		}
		all, err := a.owners.Agreements(ctx, acct)
		if err != nil {
			return err
		}
		all = slices.DeleteFunc(all, func(x owners.Agreement) bool {
			return owner != 0 && x.OwnerID != int64(owner) || code != "" && x.InternalCode != code
		})
		return listed(c, p, all, "agreements", agreementAnswerOf)
	}
	ob := o.Object("agreement", true)
	var id int
	if action != "create" {
		id, _ = ob.Int("agreement_id", fields.Int{Required: true, Min: 1, Max: maxID})
	}
	var x owners.Agreement
	if action == "create" || action == "update" {
		x = decodeAgreement(ob)
	}
	if err := v.Err(); err != nil {
		return err
	}
	x.AgreementID = int64(id)
	return recordActions[owners.Agreement, owners.Agreement, agreementAnswer]{create: a.owners.CreateAgreement,
		update: a.owners.UpdateAgreement, get: a.owners.Agreement, del: a.owners.DeleteAgreement, answer: agreementAnswerOf,
		id: "agreement_id"}.run(c, action, int64(id), x)
}

// --- expense ---

type receiptAnswer struct {
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

type expenseAnswer struct {
	ExpenseID    int64          `json:"expense_id"`
	PropertyID   int64          `json:"property_id"`
	InternalCode string         `json:"internal_code"`
	OwnerID      int64          `json:"owner_id"`
	Date         string         `json:"date"`
	Amount       string         `json:"amount"`
	Currency     string         `json:"currency"`
	Category     string         `json:"category"`
	Description  string         `json:"description"`
	BorneBy      string         `json:"borne_by"`
	Receipt      *receiptAnswer `json:"receipt"`
	CreatedAt    string         `json:"created_at"`
	UpdatedAt    string         `json:"updated_at"`
}

func expenseAnswerOf(e owners.Expense) expenseAnswer {
	out := expenseAnswer{ExpenseID: e.ExpenseID, PropertyID: e.PropertyID, InternalCode: e.InternalCode, OwnerID: e.OwnerID, Date: e.Date,
		Amount: amountText(e.Amount, e.Currency), Currency: e.Currency, Category: e.Category, Description: e.Description, BorneBy: e.BorneBy,
		CreatedAt: stamp(e.CreatedAt), UpdatedAt: stamp(e.UpdatedAt)}
	if e.Receipt != nil {
		out.Receipt = &receiptAnswer{ContentType: e.Receipt.ContentType, Size: e.Receipt.Size}
	}
	return out
}

func decodeExpense(o *fields.Object) owners.ExpenseWrite {
	var w owners.ExpenseWrite
	w.InternalCode, w.PropertyID = propertyRef(o)
	if d, ok := o.Date("date", true); ok {
		w.Date = d.Format(time.DateOnly)
	}
	w.Amount, _ = o.Decimal("amount", fields.Dec{Required: true, Positive: true, Max: maxAmount, MaxScale: 3})
	w.Category, _ = o.String("category", fields.Str{Required: true, OneOf: owners.Categories, IgnoreCase: true})
	w.Description, _ = o.String("description", fields.Str{Max: 1000})
	w.BorneBy, _ = o.String("borne_by", fields.Str{Required: true, OneOf: owners.BorneBy, IgnoreCase: true})
	if cleared(o, "receipt") {
		w.ClearReceipt = true
		return w
	}
	r := o.Object("receipt", false)
	if r == nil {
		return w
	}
	ct, okT := r.String("content_type", fields.Str{Required: true, OneOf: owners.ReceiptTypes, IgnoreCase: true})
	text, okD := r.String("data", fields.Str{Required: true})
	if !okD {
		return w
	}
	// Decoded size first, from the text's length: a body within edge's limit is at most
	// some 8 MiB, but nothing over 5 MiB is decoded.
	if base64.StdEncoding.DecodedLen(len(strings.TrimRight(text, "="))) > owners.MaxReceipt+2 {
		r.Addf("data", "must be at most %d bytes once decoded (5 MiB)", owners.MaxReceipt)
		return w
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(text); err != nil {
			r.Add("data", "must be base64")
			return w
		}
	}
	switch {
	case len(data) == 0:
		r.Add("data", "is required")
	case len(data) > owners.MaxReceipt:
		r.Addf("data", "must be at most %d bytes once decoded (5 MiB)", owners.MaxReceipt)
	case okT && owners.Sniff(data) != ct:
		got := owners.Sniff(data)
		if got == "" {
			got = "neither a JPEG, a PNG nor a PDF"
		}
		r.Add("data", "must be the "+ct+" content_type names: its content is "+got)
	default:
		w.Receipt = &owners.Receipt{ContentType: ct, Data: data}
	}
	return w
}

func (a *API) expenseResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "create", "update", "get", "list", "delete", "receipt")
	ctx, acct := c.UserContext(), account(c)
	if action == "list" {
		p := readPage(o)
		code, _ := o.String("internal_code", fields.Str{Max: 10})
		owner, _ := o.Int("owner_id", fields.Int{Min: 1, Max: maxID})
		from, okF := o.Date("from", false)
		to, okT := o.Date("to", false)
		if okF && okT && to.Before(from) {
			o.Add("to", "must not be before from")
		}
		if err := v.Err(); err != nil {
			return err
		}
		all, err := a.owners.Expenses(ctx, acct)
		if err != nil {
			return err
		}
		all = slices.DeleteFunc(all, func(e owners.Expense) bool {
			return code != "" && e.InternalCode != code || owner != 0 && e.OwnerID != int64(owner) ||
				okF && e.Date < from.Format(time.DateOnly) || okT && e.Date > to.Format(time.DateOnly)
		})
		return listed(c, p, all, "expenses", expenseAnswerOf)
	}
	ob := o.Object("expense", true)
	var id int
	if action != "create" {
		id, _ = ob.Int("expense_id", fields.Int{Required: true, Min: 1, Max: maxID})
	}
	var w owners.ExpenseWrite
	if action == "create" || action == "update" {
		w = decodeExpense(ob)
		if action == "create" && w.ClearReceipt {
			w.ClearReceipt = false
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	w.ExpenseID = int64(id)
	if action == "receipt" {
		r, err := a.owners.ExpenseReceipt(ctx, acct, int64(id))
		if err != nil {
			return ownersError(err)
		}
		return httpapi.A(c, fiber.Map{"expense_id": id, "content_type": r.ContentType, "size": len(r.Data),
			"data": base64.StdEncoding.EncodeToString(r.Data)})
	}
	return recordActions[owners.ExpenseWrite, owners.Expense, expenseAnswer]{create: a.owners.CreateExpense,
		update: a.owners.UpdateExpense, get: a.owners.Expense, del: a.owners.DeleteExpense, answer: expenseAnswerOf,
		id: "expense_id"}.run(c, action, int64(id), w)
}

// --- payout ---

type payoutAnswer struct {
	PayoutID  int64  `json:"payout_id"`
	OwnerID   int64  `json:"owner_id"`
	Date      string `json:"date"`
	Amount    string `json:"amount"`
	Currency  string `json:"currency"`
	Method    string `json:"method"`
	Reference string `json:"reference"`
	CreatedAt string `json:"created_at"`
}

func payoutAnswerOf(p owners.Payout) payoutAnswer {
	return payoutAnswer{PayoutID: p.PayoutID, OwnerID: p.OwnerID, Date: p.Date, Amount: amountText(p.Amount, p.Currency), Currency: p.Currency,
		Method: p.Method, Reference: p.Reference, CreatedAt: stamp(p.CreatedAt)}
}

func decodePayout(o *fields.Object) owners.Payout {
	var p owners.Payout
	owner, _ := o.Int("owner_id", fields.Int{Required: true, Min: 1, Max: maxID})
	p.OwnerID = int64(owner)
	if d, ok := o.Date("date", true); ok {
		p.Date = d.Format(time.DateOnly)
	}
	p.Amount, _ = o.Decimal("amount", fields.Dec{Required: true, Positive: true, Max: maxAmount, MaxScale: 3})
	cur, ok := o.String("currency", fields.Str{Required: true, Pattern: currencyPattern, PatternMsg: "must be an ISO 4217 code (EUR)"})
	p.Currency = strings.ToUpper(cur)
	if ok && p.Currency != "" {
		if sc := pricing.Scale(p.Currency); !p.Amount.Equal(p.Amount.Truncate(sc)) {
			o.Addf("amount", "must have at most %d decimal places in %s", sc, p.Currency)
		}
	}
	p.Method, _ = o.String("method", fields.Str{Required: true, OneOf: owners.PayoutMethods, IgnoreCase: true})
	p.Reference, _ = o.String("reference", fields.Str{Max: 200})
	return p
}

func (a *API) payoutResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "create", "get", "list", "delete")
	ctx, acct := c.UserContext(), account(c)
	if action == "list" {
		p := readPage(o)
		owner, _ := o.Int("owner_id", fields.Int{Min: 1, Max: maxID})
		from, okF := o.Date("from", false)
		to, okT := o.Date("to", false)
		if okF && okT && to.Before(from) {
			o.Add("to", "must not be before from")
		}
		if err := v.Err(); err != nil {
			return err
		}
		all, err := a.owners.Payouts(ctx, acct)
		if err != nil {
			return err
		}
		all = slices.DeleteFunc(all, func(x owners.Payout) bool {
			return owner != 0 && x.OwnerID != int64(owner) || okF && x.Date < from.Format(time.DateOnly) || okT && x.Date > to.Format(time.DateOnly)
		})
		return listed(c, p, all, "payouts", payoutAnswerOf)
	}
	ob := o.Object("payout", true)
	var id int
	if action != "create" {
		id, _ = ob.Int("payout_id", fields.Int{Required: true, Min: 1, Max: maxID})
	}
	var x owners.Payout
	if action == "create" {
		x = decodePayout(ob)
	}
	if err := v.Err(); err != nil {
		return err
	}
	// No update: a wrong payout is deleted (resourceBody refuses the action).
	return recordActions[owners.Payout, owners.Payout, payoutAnswer]{create: a.owners.CreatePayout, get: a.owners.Payout,
		del: a.owners.DeletePayout, answer: payoutAnswerOf, id: "payout_id"}.run(c, action, int64(id), x)
}

// --- export ---

// ownerExport adds the account's owner records to its export (docs/booking.md, "Export and
// erasure"): owners.json (payout details only as payout_set and payout_summary, never
// sealed or in clear), owner_agreements.json, owner_expenses.json, owner_payouts.json, and
// each expense's receipt as receipts/<expense_id>.<jpg|png|pdf>, which it answers.
func (a *API) ownerExport(ctx context.Context, acct string, files map[string]any, records map[string][]string) (map[string][]byte, error) {
	st := a.owners.Store()
	os, err := st.Owners(ctx, acct)
	if err != nil {
		return nil, err
	}
	ags, err := st.Agreements(ctx, acct)
	if err != nil {
		return nil, err
	}
	exps, err := st.Expenses(ctx, acct)
	if err != nil {
		return nil, err
	}
	pays, err := st.Payouts(ctx, acct)
	if err != nil {
		return nil, err
	}
	ids := func(n int, id func(int) int64) []string {
		out := make([]string, n)
		for i := range n {
			out[i] = strconv.FormatInt(id(i), 10)
		}
		slices.Sort(out)
		return out
	}
	ownerList := make([]ownerAnswer, len(os))
	for i, o := range os {
		ownerList[i] = ownerAnswerOf(o)
	}
	agList := make([]agreementAnswer, len(ags))
	for i, x := range ags {
		agList[i] = agreementAnswerOf(x)
	}
	expList := make([]expenseAnswer, len(exps))
	raw := map[string][]byte{}
	var receipts []string
	for i, x := range exps {
		expList[i] = expenseAnswerOf(x)
		if x.Receipt == nil {
			continue
		}
		r, err := st.Receipt(ctx, acct, x.ExpenseID)
		if errors.Is(err, owners.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		id := strconv.FormatInt(x.ExpenseID, 10)
		raw["receipts/"+id+receiptExt[r.ContentType]] = r.Data
		receipts = append(receipts, id)
	}
	payList := make([]payoutAnswer, len(pays))
	for i, x := range pays {
		payList[i] = payoutAnswerOf(x)
	}
	files["owners"], files["owner_agreements"], files["owner_expenses"], files["owner_payouts"] = ownerList, agList, expList, payList
	records["owners"] = ids(len(os), func(i int) int64 { return os[i].OwnerID })
	records["owner_agreements"] = ids(len(ags), func(i int) int64 { return ags[i].AgreementID })
	records["owner_expenses"] = ids(len(exps), func(i int) int64 { return exps[i].ExpenseID })
	records["owner_payouts"] = ids(len(pays), func(i int) int64 { return pays[i].PayoutID })
	slices.Sort(receipts)
	// Listed as property-svc lists its photos: by the directory of their files.
	records["receipts"] = append([]string{}, receipts...)
	return raw, nil
}

var receiptExt = map[string]string{"image/jpeg": ".jpg", "image/png": ".png", "application/pdf": ".pdf"}
