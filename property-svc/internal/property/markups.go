package property

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
)

// Markup is a channel markup: an adjustment of every night's price, after the plan's, in
// quotes asked for Channel.
type Markup struct {
	Channel string // lower case
	Adjustment
}

// MaxMarkups is the most channel markups of one level (the account, or one property).
const MaxMarkups = 50

var markupActionRule = fields.Str{Required: true, OneOf: []string{string(Set), string(Delete), string(List)}}

// MarkupRequest is a decoded /api/channel-markup body: without InternalCode the account's
// markups, with it the property's.
type MarkupRequest struct {
	Action       Action // set, delete or list
	InternalCode string // "": the account's
	Markup       Markup // set: all of it; delete: Channel only
}

// DecodeMarkup reads an /api/channel-markup body.
func DecodeMarkup(body []byte) (MarkupRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", markupActionRule)
	req := MarkupRequest{Action: Action(action)}
	req.InternalCode, _ = o.String("internal_code", fields.Str{Max: 10})
	if req.Action == Set || req.Action == Delete {
		m := o.Object("markup", true)
		req.Markup.Channel, _ = readChannel(m, "channel")
		if req.Action == Set && m != nil {
			req.Markup.Adjustment, _ = readAdjustment(m)
		}
	}
	if err := v.Err(); err != nil {
		return MarkupRequest{}, err
	}
	return req, nil
}

// ChangeMarkup applies a set or delete of /api/channel-markup: a set adds the channel's
// markup or replaces it; a delete of a channel the level has none for is ErrMarkupNotFound.
// The account's markups are part of its settings (the settings' conditional write and
// event); a property's are one write of the property (vros.property.markups.updated).
func (s *Properties) ChangeMarkup(ctx context.Context, account string, req MarkupRequest) error {
	if req.InternalCode == "" {
		_, err := s.repo.ChangeSettings(ctx, account, func(cur Settings) (AccountSettings, error) {
			list, err := changeMarkups(cur.ChannelMarkups, req, "account")
			return AccountSettings{ChannelMarkups: &list}, err
		})
		if err != nil {
			return fmt.Errorf("channel markups of account %s: %w", account, err)
		}
		return nil
	}
	_, err := s.repo.ChangeRevenue(ctx, account, PropertyRef{InternalCode: req.InternalCode}, func(cur *Revenue) (string, error) {
		list, err := changeMarkups(cur.Markups, req, "property")
		cur.Markups = list
		return contract.MarkupsUpdated, err
	})
	if err != nil {
		return fmt.Errorf("channel markups of property %q: %w", req.InternalCode, err)
	}
	return nil
}

// changeMarkups is cur, the markups of the level (account or property), with req's set or
// delete applied, sorted by channel.
func changeMarkups(cur []Markup, req MarkupRequest, level string) ([]Markup, error) {
	list := slices.Clone(cur)
	i := slices.IndexFunc(list, func(m Markup) bool { return m.Channel == req.Markup.Channel })
	switch {
	case req.Action == Delete && i < 0:
		return nil, fmt.Errorf("channel %q: %w", req.Markup.Channel, ErrMarkupNotFound)
	case req.Action == Delete:
		list = slices.Delete(list, i, i+1)
	case i >= 0:
		list[i] = req.Markup
	case len(list) >= MaxMarkups:
		return nil, violation("markup", fmt.Sprintf("the %s already has %d channel markups, the most it may have", level, MaxMarkups))
	default:
		list = append(list, req.Markup)
	}
	slices.SortFunc(list, func(a, b Markup) int { return strings.Compare(a.Channel, b.Channel) })
	return list, nil
}

// Markups returns the account's channel markups (code "") or the property's.
func (s *Properties) Markups(ctx context.Context, account, code string) ([]Markup, error) {
	if code == "" {
		st, err := s.repo.ReadSettings(ctx, account)
		if err != nil {
			return nil, fmt.Errorf("channel markups of account %s: %w", account, err)
		}
		return st.ChannelMarkups, nil
	}
	r, err := s.repo.Revenue(ctx, account, PropertyRef{InternalCode: code})
	if err != nil {
		return nil, fmt.Errorf("channel markups of property %q: %w", code, err)
	}
	return r.Markups, nil
}

// Contract is the markup as the events carry it.
func (m Markup) Contract() contract.Markup {
	return contract.Markup{Channel: m.Channel, Adjustment: m.Adjustment.Contract()}
}
