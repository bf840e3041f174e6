// Package contracttest holds the golden payloads of the event contract (testdata/, one per
// event type) and the comparisons producers' and consumers' tests make with them. It is for
// tests only: no service imports it, so images are built without the golden files.
package contracttest

import (
	"embed"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/vros/vros/libs/events/contract"
)

// Types are all the event types of the contract, each with its payload: a *contract.Property,
// *contract.Settings, *contract.Booking, *contract.Block or *contract.AccountErasure to decode into.
func Types() map[string]func() any {
	property := func() any { return new(contract.Property) }
	booking := func() any { return new(contract.Booking) }
	block := func() any { return new(contract.Block) }
	return map[string]func() any{
		contract.PropertyCreated: property, contract.PropertyUpdated: property, contract.PropertyDeleted: property, contract.PhotosUpdated: property,
		contract.PolicyUpdated: property, contract.RatesUpdated: property, contract.MethodsUpdated: property, contract.TaxesUpdated: property,
		contract.ServicesUpdated: property, contract.AmenitiesUpdated: property, contract.PricesUpdated: property,
		contract.RatePlansUpdated: property, contract.RestrictionsUpdated: property, contract.MarkupsUpdated: property,
		contract.SettingsUpdated: func() any { return new(contract.Settings) },
		contract.BookingReserved: booking, contract.BookingUpdated: booking, contract.BookingCancelled: booking,
		contract.BlockCreated: block, contract.BlockUpdated: block, contract.BlockDeleted: block,
		contract.AccountErased:   func() any { return new(contract.AccountErasure) },
		contract.ChannelConflict: func() any { return new(contract.Conflict) },
	}
}

//go:embed testdata/*.json
var golden embed.FS

// Golden is the golden payload of an event type (testdata/<type>.json): the `data` a
// producer must write for the state its test builds, and a consumer's tests decode. The
// property files follow one property through its life, one change a file, ending with
// vros.property.deleted. It panics when there is none. For tests: a binary that never calls
// it does not carry the files.
func Golden(eventType string) []byte {
	b, err := golden.ReadFile("testdata/" + eventType + ".json")
	if err != nil {
		panic(fmt.Sprintf("contracttest: no golden payload for %q", eventType))
	}
	return b
}

// DiffGolden compares the data a producer wrote for an event type with its golden payload
// and lists each difference by JSON path ("data.services[0].def is false, want true"); none
// means the producer keeps the contract. Key order and spacing do not count.
func DiffGolden(eventType string, data []byte) ([]string, error) {
	var got, want any
	if err := json.Unmarshal(data, &got); err != nil {
		return nil, fmt.Errorf("contracttest: data of %s: %w", eventType, err)
	}
	if err := json.Unmarshal(Golden(eventType), &want); err != nil {
		return nil, fmt.Errorf("contracttest: testdata/%s.json: %w", eventType, err)
	}
	out := diff("data", got, want)
	sort.Strings(out)
	return out, nil
}

// DiffPublished is DiffGolden for a whole published message value: a CloudEvent (structured
// JSON) that must be of eventType, from source, with the golden payload as its data.
func DiffPublished(value []byte, eventType, source string) ([]string, error) {
	var e struct {
		Type   string          `json:"type"`
		Source string          `json:"source"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(value, &e); err != nil {
		return nil, fmt.Errorf("contracttest: not a CloudEvent: %w", err)
	}
	out, err := DiffGolden(eventType, e.Data)
	if e.Type != eventType || e.Source != source {
		out = append(out, fmt.Sprintf("event of type %q from %q, want %q from %q", e.Type, e.Source, eventType, source))
	}
	return out, err
}

func diff(path string, got, want any) []string {
	if g, ok := got.([]any); ok {
		if w, ok := want.([]any); ok && len(g) == len(w) {
			var out []string
			for i := range g {
				out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i])...)
			}
			return out
		}
	}
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if !gok || !wok {
		if !reflect.DeepEqual(got, want) {
			return []string{fmt.Sprintf("%s is %s, want %s", path, jsonOf(got), jsonOf(want))}
		}
		return nil
	}
	var out []string
	for k, wv := range w {
		if gv, ok := g[k]; ok {
			out = append(out, diff(path+"."+k, gv, wv)...)
		} else {
			out = append(out, fmt.Sprintf("%s.%s missing, want %s", path, k, jsonOf(wv)))
		}
	}
	for k, gv := range g {
		if _, ok := w[k]; !ok {
			out = append(out, fmt.Sprintf("%s.%s = %s is not in the contract", path, k, jsonOf(gv)))
		}
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
