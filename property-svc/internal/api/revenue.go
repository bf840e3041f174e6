package api

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/property-svc/internal/property"
)

// The revenue controls of docs/rate-plans.md ("Interface A"): rate plans, restrictions per
// date and channel markups.

// ratePlanAnswer is the data of a create, update or delete: the plan's id as a string.
type ratePlanAnswer struct {
	RatePlanID string `json:"rate_plan_id"`
}

// standardPlanDTO is the standard plan in a list: its id (0) and its terms in force.
type standardPlanDTO struct {
	ID int64 `json:"id"`
	contract.PlanTerms
}

// ratePlans: create, update, delete or list the rate plans of a property.
func (a *API) ratePlans(c *fiber.Ctx) error {
	req, err := property.DecodeRatePlan(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	acc, ctx := tenancyfiber.From(c).AccountID, c.UserContext()
	if req.Action == property.List {
		std, plans, err := a.props.RatePlans(ctx, acc, req.InternalCode)
		if err != nil {
			return domainError(err, codeNotFound(req.InternalCode))
		}
		list := []any{standardPlanDTO{ID: contract.StandardPlanID, PlanTerms: std.Contract()}}
		for _, p := range plans {
			list = append(list, p.Contract())
		}
		return httpapi.A(c, fiber.Map{"rate_plans": list})
	}
	id, err := a.props.ChangeRatePlan(ctx, acc, req)
	if errors.Is(err, property.ErrPlanNameTaken) {
		return httpapi.Conflict(httpapi.StatusConflict, fmt.Sprintf("rate plan name %q is already used by another plan of this property (names are compared ignoring case)", *req.Name))
	}
	if err != nil {
		return revenueError(err, req.InternalCode, req.ID)
	}
	return httpapi.A(c, ratePlanAnswer{strconv.FormatInt(id, 10)})
}

// restrictions: set or clear restrictions (and the per-date price) on dates of a property.
func (a *API) restrictions(c *fiber.Ctx) error {
	req, err := property.DecodeRestriction(c.Body())
	if err != nil {
		return err
	}
	n, err := a.props.SetRestrictions(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	if err != nil {
		return revenueError(err, req.InternalCode, req.Plan)
	}
	return httpapi.A(c, fiber.Map{"dates": n})
}

// markups: set, delete or list the channel markups of the account, or of a property.
func (a *API) markups(c *fiber.Ctx) error {
	req, err := property.DecodeMarkup(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	acc, ctx := tenancyfiber.From(c).AccountID, c.UserContext()
	if req.Action == property.List {
		list, err := a.props.Markups(ctx, acc, req.InternalCode)
		if err != nil {
			return domainError(err, codeNotFound(req.InternalCode))
		}
		out := make([]contract.Markup, len(list))
		for i, m := range list {
			out[i] = m.Contract()
		}
		return httpapi.A(c, fiber.Map{"channel_markups": out})
	}
	err = a.props.ChangeMarkup(ctx, acc, req)
	if errors.Is(err, property.ErrMarkupNotFound) {
		level := "the account"
		if req.InternalCode != "" {
			level = fmt.Sprintf("property %q", req.InternalCode)
		}
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("channel markup %q of %s does not exist", req.Markup.Channel, level))
	}
	if err != nil {
		return domainError(err, codeNotFound(req.InternalCode))
	}
	return httpapi.A(c, fiber.Map{"channel": req.Markup.Channel})
}

// revenueError maps the errors of a rate plan or restriction change; plan names the plan
// asked for.
func revenueError(err error, code string, plan int64) error {
	if errors.Is(err, property.ErrRatePlanNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("rate plan %d does not exist", plan))
	}
	return domainError(err, codeNotFound(code))
}
