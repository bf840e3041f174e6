package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/property-svc/internal/property"
)

// The reads of /api/property: get and list.

// Read returns the live property of account with internal code code as its events carry it
// (propertyPayload: sealed secrets have no place in it). It reads by `_id` only, as update
// and delete do — the code's claim, then the document —, because FerretDB pushes down no
// other filter (docs/embedded.md).
func (s *Store) Read(ctx context.Context, account, code string) (contract.Property, error) {
	rec, err := s.resolve(ctx, account, property.PropertyRef{InternalCode: code})
	if err != nil {
		return contract.Property{}, err
	}
	return propertyPayload(rec), nil
}

// listProjection is what a list reads of each property.
var listProjection = bson.D{
	{Key: "property_id", Value: 1}, {Key: "internal_code", Value: 1}, {Key: "updated_at", Value: 1},
	{Key: "content.name", Value: 1}, {Key: "content.type", Value: 1}, {Key: "content.city", Value: 1},
	{Key: "content.country", Value: 1}, {Key: "content.maxguest", Value: 1},
}

// List returns one page of the account's live properties sorted by internal code: a count
// of what the query selects, then, unless the page lies beyond it, one find of the page
// (index account_id, internal_code). The two are not one snapshot: a property created or
// deleted between them may make the total differ by one from what the pages show.
func (s *Store) List(ctx context.Context, account string, q property.ListQuery) (property.ListPage, error) {
	filter := bson.D{{Key: "account_id", Value: account}, {Key: "deleted", Value: bson.D{{Key: "$ne", Value: true}}}}
	if q.Search != "" {
		match := bson.D{{Key: "$regex", Value: searchPattern(q.Search)}, {Key: "$options", Value: "i"}}
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "internal_code", Value: match}},
			bson.D{{Key: "content.name", Value: match}},
		}})
	}
	total, err := s.props.CountDocuments(ctx, filter)
	if err != nil {
		return property.ListPage{}, fmt.Errorf("count the properties of %s: %w", account, err)
	}
	out := property.ListPage{Total: total, Page: q.Page, Limit: q.Limit, Properties: []property.ListItem{}}
	limit := int64(q.Limit)
	// Compared before multiplying, so that no page number overflows the skip.
	if limit < 1 || q.Page < 1 || int64(q.Page-1) >= (total+limit-1)/limit {
		return out, nil
	}
	cur, err := s.props.Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "internal_code", Value: 1}}).
		SetSkip(int64(q.Page-1)*limit).SetLimit(limit).SetProjection(listProjection))
	if err != nil {
		return property.ListPage{}, fmt.Errorf("list the properties of %s: %w", account, err)
	}
	var recs []Record
	if err := cur.All(ctx, &recs); err != nil {
		return property.ListPage{}, fmt.Errorf("list the properties of %s: %w", account, err)
	}
	for _, r := range recs {
		out.Properties = append(out.Properties, property.ListItem{PropertyID: r.PropertyID, InternalCode: r.InternalCode,
			Name: r.Content.Name, Type: r.Content.Type, City: r.Content.City, Country: r.Content.Country,
			MaxGuest: r.Content.MaxGuest, UpdatedAt: r.UpdatedAt})
	}
	return out, nil
}

// searchPattern is a regular expression that matches text itself: every metacharacter
// escaped, and NUL written as an escape (a pattern may not hold the byte itself). MongoDB's
// PCRE and FerretDB's Go regexp read it alike.
func searchPattern(text string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(text), "\x00", `\x00`)
}
