package property

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vros/vros/libs/fields"
)

// GroupKind tells a category from a tag: both group properties for the account's websites
// (/api/property-category). Categories are browsed (property-category, the search's
// category_id); tags label properties (default-config's tags_list, the search's tag_id).
type GroupKind string

// Kinds of group; each is also the member of the request body that carries one.
const (
	KindCategory GroupKind = "category"
	KindTag      GroupKind = "tag"
)

// Group is a category or a tag of the account.
type Group struct {
	ID   int64
	Name string
	// ShowSearchEngine false hides a category from the websites' search forms; tags have
	// none (always false).
	ShowSearchEngine bool
	Languages        map[string]string // name by BCP 47 tag
	Properties       []int64           // property ids, in the order sent
}

// GroupRequest is a decoded /api/property-category body: one change of one category or
// tag. Nil fields were not sent: on update they keep the stored value.
type GroupRequest struct {
	Action           Action
	Kind             GroupKind
	ID               int64 // update and delete
	Name             *string
	ShowSearchEngine *bool
	Languages        *map[string]string
	Properties       *[]string // internal codes
}

// Bounds of the groups and promotions of one account. All of them travel in the account's
// settings event, which must stay well below a Kafka message's 1 MB.
const (
	maxCategories        = 100
	maxTags              = 200
	maxGroupProperties   = 2000
	maxGroupLanguages    = 50
	maxPromotions        = 500
	maxAssignedInAll     = 20000
	maxGroupID           = 1 << 53 // ids stay exact in JavaScript clients
	assignedInAllRuleMsg = "the account's categories, tags and promotions may list at most 20000 properties in all"
)

// Errors of the category, tag and promotion resources.
var (
	ErrGroupNotFound     = errors.New("category or tag not found")
	ErrNameTaken         = errors.New("name already used")
	ErrPromotionNotFound = errors.New("promotion not found")
	ErrPromotionTaken    = errors.New("promotion code already used")
)

// DecodeGroup reads an /api/property-category body: an action and either a category or a
// tag.
func DecodeGroup(body []byte) (GroupRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", actionRule)
	req := GroupRequest{Action: Action(action), Kind: KindCategory}
	var g *fields.Object
	switch hasC, hasT := o.Has("category"), o.Has("tag"); {
	case hasC && hasT:
		o.Add("tag", "must not be sent with category: a request changes one category or one tag")
	case hasT:
		req.Kind = KindTag
		g = o.Object("tag", true)
	case hasC:
		g = o.Object("category", true)
	case o != nil:
		o.Add("category", "is required (or tag, to change a tag)")
	}
	if req.Action == Update || req.Action == Delete {
		id, _ := g.Int("id", fields.Int{Required: true, Min: 1, Max: maxGroupID})
		req.ID = int64(id)
	}
	if req.Action == Create || req.Action == Update {
		req.Name = notBlank(g, "name", fields.Str{Required: req.Action == Create, Min: 1, Max: 100})
		if req.Kind == KindCategory {
			req.ShowSearchEngine = optional(g.Bool("show_search_engine", false))
		}
		req.Languages = readGroupLanguages(g, "languages")
		req.Properties = readCodes(g, "properties")
	}
	if err := v.Err(); err != nil {
		return GroupRequest{}, err
	}
	return req, nil
}

// readGroupLanguages reads {BCP 47 tag: name}; [] and {} clear the names.
func readGroupLanguages(o *fields.Object, name string) *map[string]string {
	if !o.Has(name) {
		return nil
	}
	lo := o.Object(name, false)
	if lo == nil {
		return nil
	}
	if len(lo.Keys()) > maxGroupLanguages {
		o.Addf(name, "must have at most %d languages", maxGroupLanguages)
		return nil
	}
	m := readLanguageNames(lo)
	return &m
}

// readCodes reads a list of internal codes, each once.
func readCodes(o *fields.Object, name string) *[]string {
	codes, ok := o.Strings(name, fields.List{Max: maxGroupProperties}, fields.Str{Max: 10})
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if seen[c] {
			o.Addf(name, "lists %q twice", c)
		}
		seen[c] = true
	}
	return &codes
}

// ChangeGroup applies an /api/property-category request and returns the id of the
// category or tag. Names are unique per account and kind, compared case-insensitively.
func (s *Properties) ChangeGroup(ctx context.Context, account string, req GroupRequest) (int64, error) {
	var ids []int64
	if req.Properties != nil {
		var err error
		if ids, err = s.locateCodes(ctx, account, string(req.Kind)+".properties", *req.Properties); err != nil {
			return 0, err
		}
	}
	id := req.ID
	if req.Action == Create {
		var err error
		if id, err = s.repo.NextGroupID(ctx, req.Kind); err != nil {
			return 0, fmt.Errorf("allocate a %s id: %w", req.Kind, err)
		}
	}
	_, err := s.repo.ChangeSettings(ctx, account, func(cur Settings) (AccountSettings, error) {
		list, limit := cur.Categories, maxCategories
		if req.Kind == KindTag {
			list, limit = cur.Tags, maxTags
		}
		list = slices.Clone(list)
		i := slices.IndexFunc(list, func(g Group) bool { return g.ID == id })
		if req.Action != Create && i < 0 {
			return AccountSettings{}, fmt.Errorf("%s %d: %w", req.Kind, id, ErrGroupNotFound)
		}
		if req.Name != nil && slices.ContainsFunc(list, func(g Group) bool { return g.ID != id && strings.EqualFold(g.Name, *req.Name) }) {
			return AccountSettings{}, fmt.Errorf("%s name %q: %w", req.Kind, *req.Name, ErrNameTaken)
		}
		switch req.Action {
		case Create:
			if len(list) >= limit {
				return AccountSettings{}, violation(string(req.Kind), fmt.Sprintf("the account already has %d, the most it may have", limit))
			}
			g := Group{ID: id, Name: *req.Name, ShowSearchEngine: req.Kind == KindCategory, Languages: map[string]string{}, Properties: []int64{}}
			list = append(list, merge(g, req, ids))
		case Update:
			list[i] = merge(list[i], req, ids)
		default: // Delete
			list = slices.Delete(list, i, i+1)
		}
		out := AccountSettings{Categories: &list}
		if req.Kind == KindTag {
			out = AccountSettings{Tags: &list}
		}
		return out, checkAssigned(cur, out, string(req.Kind)+".properties")
	})
	if err != nil {
		return 0, fmt.Errorf("%s of account %s: %w", req.Kind, account, err)
	}
	return id, nil
}

// merge applies the fields req carries to g.
func merge(g Group, req GroupRequest, ids []int64) Group {
	if req.Name != nil {
		g.Name = *req.Name
	}
	if req.ShowSearchEngine != nil {
		g.ShowSearchEngine = *req.ShowSearchEngine
	}
	if req.Languages != nil {
		g.Languages = *req.Languages
	}
	if req.Properties != nil {
		g.Properties = ids
	}
	return g
}

// locateCodes returns the property ids of codes, in their order; a code with no live
// property of the account is a violation of field.
func (s *Properties) locateCodes(ctx context.Context, account, field string, codes []string) ([]int64, error) {
	found, err := s.repo.LocateAll(ctx, account, codes)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", field, err)
	}
	var v fields.Violations
	ids := make([]int64, 0, len(codes))
	for _, c := range codes {
		pid, ok := found[c]
		if !ok {
			v.Addf(field, "no property of this account has internal_code %q", c)
			continue
		}
		ids = append(ids, pid)
	}
	return ids, v.Err()
}

// checkAssigned bounds the properties listed by all the account's categories, tags and
// promotions once change applies.
func checkAssigned(cur Settings, change AccountSettings, field string) error {
	cats, tags, promos := cur.Categories, cur.Tags, cur.Promotions
	if change.Categories != nil {
		cats = *change.Categories
	}
	if change.Tags != nil {
		tags = *change.Tags
	}
	if change.Promotions != nil {
		promos = *change.Promotions
	}
	n := 0
	for _, g := range append(slices.Clip(cats), tags...) {
		n += len(g.Properties)
	}
	for _, p := range promos {
		n += len(p.Properties)
	}
	if n > maxAssignedInAll {
		return violation(field, assignedInAllRuleMsg)
	}
	return nil
}

func violation(field, msg string) error {
	var v fields.Violations
	v.Add(field, msg)
	return v.Err()
}

// forgetProperty removes a deleted property from the account's categories and tags.
// Promotions keep it: removing the last property of a promotion would turn it into one
// for every property; a promotion of a deleted property applies to nothing.
func (s *Properties) forgetProperty(ctx context.Context, account string, pid int64) error {
	_, err := s.repo.ChangeSettings(ctx, account, func(cur Settings) (AccountSettings, error) {
		cats, catsChanged := without(cur.Categories, pid)
		tags, tagsChanged := without(cur.Tags, pid)
		if !catsChanged && !tagsChanged {
			return AccountSettings{}, ErrUnchanged
		}
		return AccountSettings{Categories: &cats, Tags: &tags}, nil
	})
	return err
}

// without returns groups with pid removed from each, and whether any listed it.
func without(groups []Group, pid int64) ([]Group, bool) {
	out := make([]Group, len(groups))
	changed := false
	for i, g := range groups {
		if slices.Contains(g.Properties, pid) {
			g.Properties = slices.DeleteFunc(slices.Clone(g.Properties), func(id int64) bool { return id == pid })
			changed = true
		}
		out[i] = g
	}
	return out, changed
}
