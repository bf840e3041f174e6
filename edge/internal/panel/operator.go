package panel

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/panelauth"
)

type accountsData struct {
	Accounts []account.Account
	Q        string
	Status   string
	Next     string
	Created  *createdAccount
}

// createdAccount is a new account's credentials, shown once, and the invite of its first
// owner user.
type createdAccount struct {
	Account account.Account
	Secrets []account.Secret
	Invite  string
}

const accountsPage = 50

func (p *Panel) accounts(c *fiber.Ctx) error { return p.accountsView(c, nil, "", nil) }

func (p *Panel) accountsView(c *fiber.Ctx, created *createdAccount, msg string, errs map[string]string) error {
	q := account.ListQuery{Q: strings.Clone(c.Query("q")), After: strings.Clone(c.Query("after")), Limit: accountsPage}
	if len(q.Q) > 100 {
		q.Q = q.Q[:100]
	}
	switch st := account.Status(c.Query("status")); st {
	case account.Active, account.Suspended, account.Deleting:
		q.Status = st
	}
	accs, err := p.cfg.Accounts.List(c.UserContext(), q)
	if err != nil {
		return err
	}
	d := accountsData{Accounts: accs, Q: q.Q, Status: string(q.Status), Created: created}
	if len(accs) == accountsPage {
		d.Next = accs[len(accs)-1].ID
	}
	return p.render(c, "accounts", view{Title: "Accounts", Session: sessionOf(c), Nav: "accounts", Notice: notice(c), Message: msg,
		Errors: errs, Values: map[string]string{"name": c.FormValue("name"), "owner": c.FormValue("owner")}, Data: d})
}

// createAccount opens an account (its credentials shown once) and, when an owner email is
// given, makes the invite link of its first owner user.
func (p *Panel) createAccount(c *fiber.Ctx) error {
	name := strings.TrimSpace(strings.Clone(c.FormValue("name")))
	if len([]rune(name)) > 100 {
		c.Status(fiber.StatusBadRequest)
		return p.accountsView(c, nil, "", map[string]string{"name": "must be at most 100 characters"})
	}
	owner := strings.TrimSpace(c.FormValue("owner"))
	if owner != "" {
		if _, err := panelauth.NormalEmail("owner", owner); err != nil {
			c.Status(fiber.StatusBadRequest)
			var fe *panelauth.FieldError
			errors.As(err, &fe)
			return p.accountsView(c, nil, "", map[string]string{"owner": fe.Message})
		}
	}
	acc, secrets, err := p.cfg.Accounts.Create(c.UserContext(), name, c.FormValue("sandbox") == "1")
	if err != nil {
		return err
	}
	created := &createdAccount{Account: acc, Secrets: secrets}
	if owner != "" {
		_, tok, err := p.cfg.Users.Invite(c.UserContext(), sessionOf(c), owner, panelauth.Owner, acc.ID)
		if err != nil {
			return err
		}
		created.Invite = p.inviteLink(c, tok)
	}
	return p.accountsView(c, created, "", nil)
}

type accountData struct {
	Account  account.Account
	Users    []panelauth.User
	Usage    any
	UsageErr string
	Invite   string
	Audit    []account.AuditRecord
}

func (p *Panel) accountPage(c *fiber.Ctx) error { return p.accountView(c, accountData{}, "", nil) }

func (p *Panel) accountView(c *fiber.Ctx, d accountData, msg string, errs map[string]string) error {
	id := strings.Clone(c.Params("id"))
	acc, err := p.cfg.Accounts.Get(c.UserContext(), id)
	if errors.Is(err, account.ErrNotFound) {
		return errNotYours
	}
	if err != nil {
		return err
	}
	d.Account = acc
	if d.Users, err = p.cfg.Users.Users(c.UserContext(), id); err != nil {
		return err
	}
	if p.cfg.UsageReport != nil {
		now := time.Now().UTC().Truncate(time.Second)
		if u, err := p.cfg.UsageReport(c.UserContext(), id, now.Add(-30*24*time.Hour), now); err != nil {
			d.UsageErr = err.Error()
		} else {
			d.Usage = u
		}
	}
	if d.Audit, err = p.cfg.Accounts.Audit(c.UserContext(), account.AuditQuery{AccountID: id, Limit: 20}); err != nil {
		return err
	}
	values := map[string]string{}
	for _, f := range account.PlanFields(acc.Plan) {
		values["plan["+f.Field+"]"] = strconv.FormatFloat(toFloat(f.New), 'f', -1, 64)
	}
	return p.render(c, "account", view{Title: "Account " + acc.ID + " · " + acc.Name, Session: sessionOf(c), Nav: "accounts",
		Notice: notice(c), Message: msg, Errors: errs, Values: values, Data: d})
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// accountAction is one of the account page's forms: suspend, reinstate, plan, invite.
func (p *Panel) accountAction(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("id"))
	ctx := c.UserContext()
	back := "/panel/operator/accounts/" + seg(id)
	var err error
	switch c.FormValue("do") {
	case "suspend":
		if _, err = p.cfg.Accounts.SetStatus(ctx, id, account.Suspended); err == nil {
			return redirect(c, back, "suspended")
		}
	case "reinstate":
		if _, err = p.cfg.Accounts.SetStatus(ctx, id, account.Active); err == nil {
			return redirect(c, back, "reinstated")
		}
	case "plan":
		plan, errs := planOf(c)
		if len(errs) > 0 {
			c.Status(fiber.StatusBadRequest)
			return p.accountView(c, accountData{}, "", errs)
		}
		if _, err = p.cfg.Accounts.SetPlan(ctx, id, plan); err == nil {
			return redirect(c, back, "plan")
		}
	case "invite":
		var tok string
		_, tok, err = p.cfg.Users.Invite(ctx, sessionOf(c), c.FormValue("email"), panelauth.Owner, id)
		if fe, ok := errors.AsType[*panelauth.FieldError](err); ok {
			c.Status(fiber.StatusBadRequest)
			return p.accountView(c, accountData{}, "", map[string]string{fe.Field: fe.Message})
		}
		if err == nil {
			return p.accountView(c, accountData{Invite: p.inviteLink(c, tok)}, "", nil)
		}
	default:
		return fiber.NewError(fiber.StatusBadRequest, "unknown action")
	}
	switch {
	case errors.Is(err, account.ErrNotFound):
		return errNotYours
	case errors.Is(err, account.ErrDeleting):
		return fiber.NewError(fiber.StatusConflict, "this account is being deleted: nothing else changes it")
	}
	return err
}

// planOf reads the plan form: each field a number ≥ 0 (0: edge's default, or no limit).
func planOf(c *fiber.Ctx) (account.Plan, map[string]string) {
	errs := map[string]string{}
	num := func(name string, whole bool) float64 {
		raw := strings.TrimSpace(c.FormValue("plan[" + name + "]"))
		if raw == "" {
			return 0
		}
		f, err := strconv.ParseFloat(raw, 64)
		switch {
		case err != nil || f < 0 || f > 1e9:
			errs["plan["+name+"]"] = "must be a number from 0 to 1000000000"
		case whole && f != float64(int64(f)):
			errs["plan["+name+"]"] = "must be a whole number"
		}
		return f
	}
	p := account.Plan{RateRPS: num("rate_rps", false), RateBurst: int(num("rate_burst", true)), MaxConcurrent: int(num("max_concurrent", true)),
		BodyLimit: int(num("body_limit", true)), MaxProperties: int(num("max_properties", true))}
	return p, errs
}

type auditData struct {
	Records []account.AuditRecord
	Account string
	Next    string
}

func (p *Panel) audit(c *fiber.Ctx) error {
	q := account.AuditQuery{AccountID: strings.Clone(c.Query("account")), After: strings.Clone(c.Query("after")), Limit: 50}
	recs, err := p.cfg.Accounts.Audit(c.UserContext(), q)
	if err != nil {
		return err
	}
	d := auditData{Records: recs, Account: q.AccountID}
	if len(recs) == 50 {
		d.Next = recs[len(recs)-1].ID
	}
	return p.render(c, "audit", view{Title: "Audit log", Session: sessionOf(c), Nav: "audit", Data: d})
}
