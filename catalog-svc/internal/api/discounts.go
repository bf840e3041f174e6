package api

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/ifaceb"
)

// discountJSON is one range of getdiscounts: the original's {startDate, endDate}, then what
// kind of discount it is and its name.
type discountJSON struct {
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate"` // "" open-ended
	Type      string `json:"type"`    // "promotion" or "los"
	Name      string `json:"name"`
}

// getDiscounts lists the date ranges in which a discount applies to a stay at the property:
// each promotion code of the account valid for it that has not ended before today (its
// check-in window, by start date, ties in the account's order), then, when the property has
// length-of-stay discounts, one open range from today (they apply on every date).
func (a *API) getDiscounts(c *fiber.Ctx) error {
	p, _, err := a.property(c)
	if err != nil {
		return err
	}
	today := p.Today(a.now()).String()
	pid := p.Snap.PropertyID
	out := []discountJSON{}
	for _, pr := range a.catalog.Settings(account(c)).Promotions {
		if len(pr.Properties) > 0 && !slices.Contains(pr.Properties, pid) {
			continue
		}
		if pr.EndDate != "" && pr.EndDate < today {
			continue
		}
		name := pr.Name
		if name == "" {
			name = pr.Code
		}
		out = append(out, discountJSON{StartDate: pr.StartDate, EndDate: pr.EndDate, Type: "promotion", Name: name})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartDate < out[j].StartDate })
	if r := p.Snap.Rates; r != nil && len(r.LOS) > 0 {
		los := slices.Clone(r.LOS)
		sort.Slice(los, func(i, j int) bool { return los[i].Days < los[j].Days })
		tiers := make([]string, 0, len(los))
		for _, l := range los {
			tiers = append(tiers, fmt.Sprintf("%d+ nights %s%%", l.Days, ifaceb.Money(l.Discount)))
		}
		out = append(out, discountJSON{StartDate: today, EndDate: "", Type: "los", Name: strings.Join(tiers, ", ")})
	}
	return httpapi.B(c, out)
}
