package api

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/property-svc/internal/property"
)

// The reads of /api/property (docs/interface-a.md, "Extensions").

// getProperty answers the live property as its events carry it (contract.Property), with
// account_id left blank: the caller is the account.
func (a *API) getProperty(c *fiber.Ctx, account, code string) error {
	p, err := a.props.Get(c.UserContext(), account, code)
	if err != nil {
		return domainError(err, codeNotFound(code))
	}
	p.AccountID = ""
	return httpapi.A(c, p)
}

// listAnswer is the data of a list answer.
type listAnswer struct {
	Total      int64      `json:"total"`
	Page       int        `json:"page"`
	Limit      int        `json:"limit"`
	Properties []listItem `json:"properties"`
}

// listItem is one property of a list; property_id is a string, as create answers it.
type listItem struct {
	PropertyID   string    `json:"property_id"`
	InternalCode string    `json:"internal_code"`
	Name         string    `json:"name"`
	Type         string    `json:"type"`
	City         string    `json:"city"`
	Country      string    `json:"country"`
	MaxGuest     int       `json:"maxguest"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// listProperties answers one page of the account's live properties.
func (a *API) listProperties(c *fiber.Ctx, account string, q property.ListQuery) error {
	page, err := a.props.List(c.UserContext(), account, q)
	if err != nil {
		return err
	}
	out := listAnswer{Total: page.Total, Page: page.Page, Limit: page.Limit, Properties: make([]listItem, len(page.Properties))}
	for i, p := range page.Properties {
		out.Properties[i] = listItem{PropertyID: strconv.FormatInt(p.PropertyID, 10), InternalCode: p.InternalCode, Name: p.Name,
			Type: p.Type, City: p.City, Country: p.Country, MaxGuest: p.MaxGuest, UpdatedAt: p.UpdatedAt.UTC()}
	}
	return httpapi.A(c, out)
}
