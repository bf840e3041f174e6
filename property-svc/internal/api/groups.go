package api

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/property-svc/internal/property"
)

// categoryAnswer and tagAnswer are the data of /api/property-category: the id, as a
// string like A1's property_id.
type categoryAnswer struct {
	CategoryID string `json:"category_id"`
}

type tagAnswer struct {
	TagID string `json:"tag_id"`
}

type promotionAnswer struct {
	PromotionCode string `json:"promotion_code"`
}

// group: create, update or delete a category or a tag, and assign properties to it.
func (a *API) group(c *fiber.Ctx) error {
	req, err := property.DecodeGroup(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	id, err := a.props.ChangeGroup(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	switch {
	case errors.Is(err, property.ErrGroupNotFound):
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("%s %d does not exist", req.Kind, req.ID))
	case errors.Is(err, property.ErrNameTaken):
		return httpapi.Conflict(httpapi.StatusConflict, fmt.Sprintf("%s name %q is already used by another %s of this account (names are compared ignoring case)", req.Kind, *req.Name, req.Kind))
	case err != nil:
		return err
	}
	sid := strconv.FormatInt(id, 10)
	if req.Kind == property.KindTag {
		return httpapi.A(c, tagAnswer{sid})
	}
	return httpapi.A(c, categoryAnswer{sid})
}

// promotion: create, update or delete a promotion code.
func (a *API) promotion(c *fiber.Ctx) error {
	req, err := property.DecodePromotion(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	code, err := a.props.ChangePromotion(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	switch {
	case errors.Is(err, property.ErrPromotionNotFound):
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("promotion code %q does not exist", req.Promotion.Code))
	case errors.Is(err, property.ErrPromotionTaken):
		return httpapi.Conflict(httpapi.StatusConflict, fmt.Sprintf("promotion code %q is already used by this account (codes are compared ignoring case)", req.Promotion.Code))
	case err != nil:
		return err
	}
	return httpapi.A(c, promotionAnswer{code})
}

// brandAnswer is the data of /api/account-brand: the id, as a string like category_id.
type brandAnswer struct {
	BrandID string `json:"brand_id"`
}

// brand: create, update or delete a brand (one website of the account; docs/brands.md).
func (a *API) brand(c *fiber.Ctx) error {
	req, err := property.DecodeBrand(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	id, err := a.props.ChangeBrand(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	switch {
	case errors.Is(err, property.ErrBrandNotFound):
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("brand %d does not exist", req.ID))
	case err != nil:
		return err
	}
	return httpapi.A(c, brandAnswer{strconv.Itoa(id)})
}
