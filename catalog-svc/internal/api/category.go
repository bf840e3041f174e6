package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/catalog-svc/internal/catalog"
)

// categorySummaryJSON is a property as property-category lists it.
type categorySummaryJSON struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	City       string `json:"city"`
	Country    string `json:"country"`
	Brief      string `json:"brief"`
	MaxGuest   string `json:"maxguest"`
	Bedroom    string `json:"bedroom"`
	Bathroom   string `json:"bathroom"`
	IsFeatured string `json:"isfeatured"`
	ImagePath  string `json:"image_path"`
}

// categoryJSON is one entry of property-category: a category, or (id "p<property_id>") a
// property in no category.
type categoryJSON struct {
	ID               string                `json:"id"`
	Name             string                `json:"name"`
	ShowSearchEngine string                `json:"show_search_engine"`
	Properties       []categorySummaryJSON `json:"properties"`
	Gallery          []string              `json:"gallery"` // the WordPress plugin prints gallery[0] as a URL
	Languages        ordered[string]       `json:"languages"`
}

func categorySummary(base string, p *catalog.Property) categorySummaryJSON {
	ct := p.Snap.Content
	out := categorySummaryJSON{ID: strconv.FormatInt(p.Snap.PropertyID, 10), Name: ct.Name, Type: ct.Type, City: ct.City,
		Country: ct.Country, Brief: ct.Brief, MaxGuest: strconv.Itoa(ct.MaxGuest), Bedroom: strconv.Itoa(ct.Bedrooms),
		Bathroom: strconv.Itoa(ct.Bathrooms), IsFeatured: strconv.Itoa(flag(ct.IsFeatured))}
	if ph, ok := mainPhoto(p); ok {
		out.ImagePath = mediaLink(base, ph.Key, "original")
	}
	return out
}

// entry builds a category entry of props: their summaries and the links of their main
// photos (the original rendition).
func entry(base, id, name string, show bool, props []*catalog.Property, langs ordered[string]) categoryJSON {
	out := categoryJSON{ID: id, Name: name, ShowSearchEngine: strconv.Itoa(flag(show)), Properties: []categorySummaryJSON{},
		Gallery: []string{}, Languages: langs}
	for _, p := range props {
		out.Properties = append(out.Properties, categorySummary(base, p))
		if ph, ok := mainPhoto(p); ok {
			out.Gallery = append(out.Gallery, mediaLink(base, ph.Key, "original"))
		}
	}
	return out
}

// propertyCategory lists the account's categories in the owner's order, each with its live
// properties in the category's order; hidden ones are listed with show_search_engine "0" (the
// websites hide them). With property_include true, the live properties in no category
// follow by id, each as an entry of its own with id "p<property_id>".
func (a *API) propertyCategory(c *fiber.Ctx) error {
	in := readInput(c)
	include, _ := in.o.Bool("property_include", false)
	sc := a.readScope(c, in)
	if err := in.err(); err != nil {
		return err
	}
	acc := account(c)
	st := sc.st
	base := a.mediaBase(c)
	out := []categoryJSON{}
	inSome := map[int64]bool{}
	for _, cat := range st.Categories {
		var props []*catalog.Property
		seen := map[int64]bool{}
		for _, pid := range cat.Properties {
			inSome[pid] = true
			if p, ok := a.catalog.Property(acc, pid); ok && !seen[pid] && sc.has(pid) {
				seen[pid] = true
				props = append(props, p)
			}
		}
		out = append(out, entry(base, strconv.FormatInt(cat.ID, 10), cat.Name, cat.ShowSearchEngine, props,
			byLanguage(cat.Languages, st.Languages, cat.Name)))
	}
	if include {
		for _, p := range sc.filter(a.catalog.Properties(acc)) {
			if inSome[p.Snap.PropertyID] {
				continue
			}
			name := p.Snap.Content.Name
			out = append(out, entry(base, "p"+strconv.FormatInt(p.Snap.PropertyID, 10), name, true, []*catalog.Property{p},
				byLanguage(nil, st.Languages, name)))
		}
	}
	return c.JSON(out)
}
