package api

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"

	"github.com/vros/vros/catalog-svc/internal/catalog"
)

// ordered is a JSON object whose keys are data (property_gallery_<id>, language codes),
// written in the order they were added: PHP clients read answers positionally (reset(),
// pos()), and encoding/json would sort a Go map's keys.
type ordered[V any] struct {
	keys []string
	vals []V
}

func (o *ordered[V]) add(k string, v V) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o ordered[V]) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// byLanguage orders a per-language map: the account's languages first, in the account's
// order (a missing one takes fallback when fallback is not ""), then any other code the map
// holds, sorted.
func byLanguage(m map[string]string, langs []string, fallback string) ordered[string] {
	var out ordered[string]
	seen := map[string]bool{}
	for _, l := range langs {
		if seen[l] {
			continue
		}
		seen[l] = true
		if v, ok := m[l]; ok {
			out.add(l, v)
		} else if fallback != "" {
			out.add(l, fallback)
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out.add(k, m[k])
	}
	return out
}

// zone is the time zone of a property's timestamps: its own, else the account's, else UTC.
func zone(p *catalog.Property, st catalog.Settings) *time.Location {
	if p != nil && p.Pricing.Location != nil {
		return p.Pricing.Location
	}
	for _, name := range []string{contentZone(p), st.Timezone} {
		if name == "" || name == "Local" {
			continue
		}
		if loc, err := time.LoadLocation(name); err == nil {
			return loc
		}
	}
	return time.UTC
}

func contentZone(p *catalog.Property) string {
	if p == nil {
		return ""
	}
	return p.Snap.Content.Timezone
}

// timestampLayout is how every timestamp shown to clients is written, in zone's time.
const timestampLayout = "2006-01-02 15:04:05"
