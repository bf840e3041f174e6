package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/vros/vros/property-svc/internal/property"
)

// Export reads every record of the account (property.Accounts). Each is written as the
// event contract has it (docs/events.md): the schema consumers already read, in which sealed
// gateway secrets have no field.
func (s *Store) Export(ctx context.Context, account string) (property.Export, error) {
	recs, err := s.accountProperties(ctx, account)
	if err != nil {
		return property.Export{}, err
	}
	slices.SortFunc(recs, func(a, b Record) int { return cmp.Compare(a.PropertyID, b.PropertyID) })
	var out property.Export
	props := property.ExportCollection{Name: "properties", Records: []property.ExportRecord{}}
	for _, r := range recs {
		payload := propertyPayload(r)
		payload.ICalTokenSHA256 = "" // the export link is a credential: neither it nor its hash is exported
		if err := add(&props, strconv.FormatInt(r.PropertyID, 10), payload); err != nil {
			return out, err
		}
		if r.Deleted {
			continue
		}
		for _, ph := range r.Photos {
			d, err := json.Marshal(photoExport{PropertyID: r.PropertyID, InternalCode: r.InternalCode, PhotoID: ph.PhotoID, Key: ph.Key,
				Width: ph.Width, Height: ph.Height, Source: ph.Source, CreatedAt: ph.CreatedAt})
			if err != nil {
				return out, fmt.Errorf("export photo %s: %w", ph.Key, err)
			}
			out.Photos = append(out.Photos, property.ExportRecord{ID: ph.Key, Data: d})
		}
	}
	slices.SortFunc(out.Photos, func(a, b property.ExportRecord) int { return cmp.Compare(a.ID, b.ID) })

	st, found, err := s.readSettings(ctx, account)
	if err != nil {
		return out, err
	}
	p := settingsPayload(st.withDefaults())
	settings := property.ExportCollection{Name: "settings", Records: []property.ExportRecord{}}
	if found {
		if err := add(&settings, account, p); err != nil {
			return out, err
		}
	}
	// The settings' lists are collections of their own, so that the manifest lists each
	// brand, category, tag and promotion by its id.
	out.Collections = []property.ExportCollection{props, settings}
	for _, c := range []struct {
		name  string
		items int
		item  func(i int) (string, any)
	}{
		{"brands", len(p.Brands), func(i int) (string, any) { return strconv.Itoa(p.Brands[i].ID), p.Brands[i] }},
		{"categories", len(p.Categories), func(i int) (string, any) { return strconv.FormatInt(p.Categories[i].ID, 10), p.Categories[i] }},
		{"tags", len(p.Tags), func(i int) (string, any) { return strconv.FormatInt(p.Tags[i].ID, 10), p.Tags[i] }},
		{"promotions", len(p.Promotions), func(i int) (string, any) { return p.Promotions[i].Code, p.Promotions[i] }},
	} {
		col := property.ExportCollection{Name: c.name, Records: []property.ExportRecord{}}
		for i := range c.items {
			id, v := c.item(i)
			if err := add(&col, id, v); err != nil {
				return out, err
			}
		}
		out.Collections = append(out.Collections, col)
	}
	return out, nil
}

// photoExport is one photo's metadata in an export: the photo, the property it belongs to,
// and its media key, the name of its image in the archive.
type photoExport struct {
	PropertyID   int64     `json:"property_id"`
	InternalCode string    `json:"internal_code"`
	PhotoID      int64     `json:"photo_id"`
	Key          string    `json:"key"`
	Width        int       `json:"width"`
	Height       int       `json:"height"`
	Source       string    `json:"source,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// add appends v, as JSON, to c as the record id.
func add(c *property.ExportCollection, id string, v any) error {
	d, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("export %s %s: %w", c.Name, id, err)
	}
	c.Records = append(c.Records, property.ExportRecord{ID: id, Data: d})
	return nil
}
