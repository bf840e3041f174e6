package admin

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// panelUser: POST /admin/v1/panel-users {email, name?, password?, role, account_id?} → 201
// with the user, and without a password the invite link the user sets one with (docs/panel.md):
// how an operator user comes to be, and the first owner user of an account.
func (a *API) panelUser(c *fiber.Ctx) error {
	if a.users == nil {
		return httpapi.Unavailable("the management panel is not configured")
	}
	var v fields.Violations
	obj := fields.Parse(c.Body(), "", &v)
	email, _ := obj.String("email", fields.Str{Required: true, Max: 254})
	name, _ := obj.String("name", fields.Str{Max: 100})
	password, _ := obj.String("password", fields.Str{Max: panelauth.MaxPassword})
	role, _ := obj.String("role", fields.Str{Required: true, OneOf: []string{string(panelauth.Owner), string(panelauth.Operator)}})
	accountID, _ := obj.String("account_id", fields.Str{Max: 20})
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	if role == string(panelauth.Owner) {
		if accountID == "" {
			return httpapi.InvalidField("account_id", "is required for an owner")
		}
		if _, err := a.accounts.Get(ctx, accountID); err != nil {
			return notFound(err, accountID)
		}
	}
	out := fiber.Map{"email": "", "role": role, "account_id": accountID}
	var err error
	if password != "" {
		var u panelauth.User
		u, err = a.users.CreateUser(ctx, email, name, password, panelauth.Role(role), accountID)
		out["email"] = u.Email
	} else {
		edgeURL, uerr := a.edgeURL()
		if uerr != nil {
			return uerr
		}
		by := panelauth.Session{Role: panelauth.Operator, Email: "admin:" + account.ActorFrom(ctx).Fingerprint}
		var inv panelauth.Invite
		var tok string
		inv, tok, err = a.users.Invite(ctx, by, email, panelauth.Role(role), accountID)
		out["email"], out["invite_url"], out["invite_expires_at"] = inv.Email, edgeURL+"/panel/invite/"+tok, inv.ExpiresAt
	}
	if fe, ok := errors.AsType[*panelauth.FieldError](err); ok {
		return httpapi.InvalidField(fe.Field, fe.Message)
	}
	if errors.Is(err, panelauth.ErrEmailTaken) {
		return httpapi.Conflict(httpapi.StatusConflict, "a panel user with this email already exists")
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"code": fiber.StatusCreated, "data": out})
}
