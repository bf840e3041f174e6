package property

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
)

// PromotionType says how a promotion's amount is read.
type PromotionType string

// Promotion types.
const (
	PercentOff PromotionType = "percent" // Amount percent off the rent
	FlatOff    PromotionType = "flat"    // Amount off the rent, in the account's currency
)

// Promotion is a promotion code of the account (/api/property-promotion): a discount on
// the rent of stays whose check-in falls in [Start, End] and that last at least MinNights
// nights. booking-svc applies it and counts its uses.
type Promotion struct {
	Code       string // unique in the account, compared case-insensitively
	Name       string
	Type       PromotionType
	Amount     decimal.Decimal
	Start      time.Time // first check-in day
	End        time.Time // last check-in day; zero: open-ended
	MinNights  int       // 0: any stay
	UsageLimit int       // 0: no limit
	Properties []int64   // property ids; empty: every property
}

// EndDate is End as YYYY-MM-DD, "" when open-ended (as stored and published).
func (p Promotion) EndDate() string {
	if p.End.IsZero() {
		return ""
	}
	return p.End.Format(time.DateOnly)
}

// PromotionRequest is a decoded /api/property-promotion body. On delete only Code is set;
// create and update carry the whole promotion (an update replaces it, its uses counted so
// far kept by booking-svc).
type PromotionRequest struct {
	Action    Action
	Promotion Promotion // Properties unset: see Codes
	Codes     []string  // internal codes of the properties; empty: every property
}

var promotionCode = fields.Str{Required: true, Min: 1, Max: 32, Pattern: regexp.MustCompile(`^[A-Za-z0-9_-]+$`),
	PatternMsg: "must contain only letters A-Z, digits, _ and -"}

// DecodePromotion reads an /api/property-promotion body.
func DecodePromotion(body []byte) (PromotionRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", actionRule)
	req := PromotionRequest{Action: Action(action)}
	p := o.Object("promotion", true)
	pr := &req.Promotion
	pr.Code, _ = p.String("code", promotionCode)
	if req.Action == Create || req.Action == Update {
		pr.Name, _ = p.String("name", fields.Str{Required: true, Min: 1, Max: 100})
		typ, typOK := p.String("type", fields.Str{Required: true, IgnoreCase: true, OneOf: []string{string(PercentOff), string(FlatOff)}})
		pr.Type = PromotionType(typ)
		rule := fields.Dec{Required: true, Positive: true, Max: maxInt32, MaxScale: 4}
		switch {
		case typOK && pr.Type == PercentOff:
			rule.Max, rule.MaxScale = decimal.NewFromInt(99), 4
		case typOK && pr.Type == FlatOff:
			rule.MaxScale = 2
		}
		pr.Amount, _ = p.Decimal("amount", rule)
		var startOK bool
		pr.Start, startOK = p.Date("start_date", true)
		end, endOK := p.Date("end_date", false)
		if endOK {
			pr.End = end
			if startOK && end.Before(pr.Start) {
				p.Add("end_date", "must not be before start_date")
			}
		}
		pr.MinNights, _ = p.Int("min_nights", fields.Int{Min: 0, Max: 365})
		pr.UsageLimit, _ = p.Int("usage_limit", fields.Int{Min: 0, Max: contract.MaxUsageLimit})
		if codes := readCodes(p, "properties"); codes != nil {
			req.Codes = *codes
		}
	}
	if err := v.Err(); err != nil {
		return PromotionRequest{}, err
	}
	return req, nil
}

// ChangePromotion applies an /api/property-promotion request and returns the code as
// stored (an update or delete names it in any case).
func (s *Properties) ChangePromotion(ctx context.Context, account string, req PromotionRequest) (string, error) {
	p := req.Promotion
	p.Properties = []int64{}
	if len(req.Codes) > 0 {
		ids, err := s.locateCodes(ctx, account, "promotion.properties", req.Codes)
		if err != nil {
			return "", err
		}
		p.Properties = ids
	}
	code := p.Code
	_, err := s.repo.ChangeSettings(ctx, account, func(cur Settings) (AccountSettings, error) {
		list := slices.Clone(cur.Promotions)
		i := slices.IndexFunc(list, func(x Promotion) bool { return strings.EqualFold(x.Code, p.Code) })
		switch {
		case req.Action == Create && i >= 0:
			return AccountSettings{}, fmt.Errorf("promotion %q: %w", list[i].Code, ErrPromotionTaken)
		case req.Action != Create && i < 0:
			return AccountSettings{}, fmt.Errorf("promotion %q: %w", p.Code, ErrPromotionNotFound)
		}
		switch req.Action {
		case Create:
			if len(list) >= maxPromotions {
				return AccountSettings{}, violation("promotion", fmt.Sprintf("the account already has %d promotions, the most it may have", maxPromotions))
			}
			list = append(list, p)
		case Update:
			code = list[i].Code
			p.Code = code
			list[i] = p
		default: // Delete
			code = list[i].Code
			list = slices.Delete(list, i, i+1)
		}
		out := AccountSettings{Promotions: &list}
		return out, checkAssigned(cur, out, "promotion.properties")
	})
	if err != nil {
		return "", fmt.Errorf("promotion of account %s: %w", account, err)
	}
	return code, nil
}
