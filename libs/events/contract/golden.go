package contract

import (
	"embed"
	"fmt"
)

// Types are all the event types of the contract, each with its payload: a *Property,
// *Settings, *Booking or *Block to decode into.
func Types() map[string]func() any {
	property := func() any { return new(Property) }
	booking := func() any { return new(Booking) }
	block := func() any { return new(Block) }
	return map[string]func() any{
		PropertyCreated: property, PropertyUpdated: property, PropertyDeleted: property, PhotosUpdated: property,
		PolicyUpdated: property, RatesUpdated: property, MethodsUpdated: property, TaxesUpdated: property,
		ServicesUpdated: property, AmenitiesUpdated: property, PricesUpdated: property,
		SettingsUpdated: func() any { return new(Settings) },
		BookingReserved: booking, BookingUpdated: booking, BookingCancelled: booking,
		BlockCreated: block, BlockDeleted: block,
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
		panic(fmt.Sprintf("contract: no golden payload for %q", eventType))
	}
	return b
}
