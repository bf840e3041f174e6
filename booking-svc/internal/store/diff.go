package store

import (
	"reflect"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// fixed are the fields of a booking no change rewrites (or that Update sets itself).
var fixed = map[string]bool{"_id": true, "account_id": true, "booking_id": true, "version": true, "last_change": true,
	"updated_at": true, "created_at": true}

// changes are the fields of after that differ from before, as $set and $unset: only what a
// change did is written, so that concurrent changes of other fields (a payment recorded
// while the arrival form changes) all land, as single-field updates would. Payments are
// compared one by one. An `omitempty` field become zero is removed.
func changes(before, after BookingRec) (set, unset bson.D) {
	bv, av := reflect.ValueOf(before), reflect.ValueOf(after)
	t := bv.Type()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("bson"), ",")
		if fixed[name] {
			continue
		}
		if name == "payments" {
			s, u := paymentChanges(before.Payments, after.Payments)
			set, unset = append(set, s...), append(unset, u...)
			continue
		}
		b, a := bv.Field(i), av.Field(i)
		switch {
		case reflect.DeepEqual(b.Interface(), a.Interface()):
		case opts == "omitempty" && a.IsZero():
			unset = append(unset, bson.E{Key: name, Value: ""})
		default:
			set = append(set, bson.E{Key: name, Value: a.Interface()})
		}
	}
	return set, unset
}

func paymentChanges(before, after map[string]PaymentRec) (set, unset bson.D) {
	for id, p := range after {
		if old, ok := before[id]; !ok || !reflect.DeepEqual(old, p) {
			set = append(set, bson.E{Key: "payments." + id, Value: p})
		}
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			unset = append(unset, bson.E{Key: "payments." + id, Value: ""})
		}
	}
	return set, unset
}
