package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
)

// yearRates: base 100 (150 on weekends), weekly and monthly prices, LOS tiers, a summer-like
// season with its own weekend price and a winter one without; minimum stay 1 everywhere so
// that every night can be quoted alone.
func yearRates(code string) (string, obj) {
	return "property-rate", obj{"internal_code": code,
		"rate": obj{"daily_price": 100, "weekend_price": 150, "weekly_price": 600, "monthly_price": 2000, "minimum_stay": 1},
		"los":  []obj{{"days": 7, "discount": 5}, {"days": 28, "discount": 10}},
		"setting": obj{"standard_occupants": 4, "accept_booking_upto": 12, "advanced_notice_booking_from": "0",
			"apply_weekend_price": true},
		"season": []obj{
			{"name": "High", "start_date": day(20), "end_date": day(60), "daily_price": 210.5, "weekend_price": 275, "minimum_stay": 1},
			{"name": "Winter", "start_date": day(200), "end_date": day(260), "daily_price": 80, "weekly_price": 500, "minimum_stay": 1},
		}}
}

// TestCalendarAgreesWithQuotes: over a year with seasons, weekend prices, per-date prices
// and LOS tiers, the calendar's price of a night equals the price of that night in a
// one-night quote (every second night, which visits every weekday).
func TestCalendarAgreesWithQuotes(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "YEAR1", yearRates)
	comp := acc.AccountID + "_" + strconv.Itoa(pid)
	acc.b(t, "setprices_minnights", obj{"propertyId": comp, "pricingArray": `[{"date":"` + day(31) + `","recommended_price":"333.33","minNights":"1"},` +
		`{"date":"` + day(120) + `","recommended_price":"99.99","minNights":"1"}]`}).ok(t, nil)
	var cal []calDay
	eventually(t, "per-date prices in the calendar", func() bool {
		return acc.try(t, "getcalendar", obj{"propertyId": comp, "startDate": day(1), "endDate": day(360)}, &cal) &&
			len(cal) == 360 && cal[30].Price.Equal(dec("333.33"))
	})
	waitVersion(t, acc, pid)
	distinct := map[string]bool{}
	for i := 0; i < len(cal); i += 2 {
		d := cal[i].Date
		var q bookingData
		acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": d, "checkout": day(2 + i)}).ok(t, &q)
		if got := q.NightlyDetail[d]; !got.Equal(cal[i].Price) {
			t.Fatalf("%s: calendar %s, one-night quote %s", d, cal[i].Price, got)
		}
		distinct[cal[i].Price.String()] = true
	}
	for _, want := range []string{"100", "150", "210.5", "275", "80", "333.33"} {
		if !distinct[decimal.RequireFromString(want).String()] {
			t.Fatalf("the year never priced %s: %v", want, distinct)
		}
	}
}

// TestPoisonEventIsParked: an event nobody can read is parked with its error, and the
// events after it on the same partition still apply.
func TestPoisonEventIsParked(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "POI1")
	key := acc.AccountID + ":" + strconv.Itoa(pid) // the property's own key: same partition
	pub := events.NewPublisher(st.KafkaBrokers)
	defer pub.Close()
	if err := pub.Publish(context.Background(), events.Message{Topic: events.TopicProperty, Key: key, Value: []byte("{not a cloudevent")}); err != nil {
		t.Fatal(err)
	}
	p := validProperty("POI1")
	p["name"] = "Renamed After the Poison Event"
	acc.a(t, "property", obj{"action": "update", "property": p}).status(t, http.StatusOK)
	comp := acc.AccountID + "_" + strconv.Itoa(pid)
	eventually(t, "catalog applies the change after the poison event", func() bool {
		var info []struct {
			Name string `json:"name"`
		}
		return acc.try(t, "getpropertyinfo", obj{"propertyId": comp}, &info) && len(info) == 1 && info[0].Name == p["name"]
	})
	waitVersion(t, acc, pid) // booking-svc too
	for _, db := range []string{"vros_catalog", "vros_booking"} {
		var doc bson.M
		err := mongoDB.Database(db).Collection("parked_events").FindOne(context.Background(), bson.D{{Key: "key", Value: key}}).Decode(&doc)
		if err != nil || doc["error"] == "" {
			t.Fatalf("%s: poison event not parked: %v %v", db, doc, err)
		}
	}
}

// TestCatalogRebuildsFromTopics: with its database dropped, catalog-svc started under a new
// consumer group rebuilds every view from the topics alone.
func TestCatalogRebuildsFromTopics(t *testing.T) {
	acc := newAccount(t)
	pid := bookable(t, acc, "REB1")
	comp := acc.AccountID + "_" + strconv.Itoa(pid)
	b := create(t, acc, guest(pid, day(30), day(33)))
	nonAvailable := func() bool {
		var ranges []nonAvail
		return acc.try(t, "getnonavailabledate", obj{"propertyId": pid, "startDate": day(1)}, &ranges) &&
			len(ranges) == 1 && ranges[0].StartDate == day(30)
	}
	eventually(t, "booking in the catalog", nonAvailable)

	st.StopCatalog()
	if err := mongoDB.Database("vros_catalog").Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// FerretDB's SQLite backend deletes a dropped database's files, and the first write
	// that reopens it may fail once with "disk I/O error" (SQLITE_IOERR_DELETE_NOENT):
	// the catalog must start on a database that can be written again, as a restarted pod
	// would find it.
	eventually(t, "the dropped database can be written again", func() bool {
		err := mongoDB.Database("vros_catalog").CreateCollection(context.Background(), "rebuild_marker")
		return err == nil || strings.Contains(err.Error(), "NamespaceExists") || strings.Contains(err.Error(), "already exists")
	})
	if err := st.StartCatalog(context.Background(), "catalog-rebuild-"+time.Now().Format("150405.000000")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rebuilt booking", nonAvailable)
	var info []struct {
		ID string `json:"id"`
	}
	eventually(t, "rebuilt property", func() bool {
		return acc.try(t, "getpropertyinfo", obj{"propertyId": comp}, &info) && len(info) == 1 && info[0].ID == comp
	})
	var res struct {
		Reservations []struct {
			ID string `json:"id"`
		} `json:"reservations"`
	}
	eventually(t, "rebuilt reservations", func() bool {
		return acc.try(t, "getreservations", obj{"propertyId": comp}, &res) && len(res.Reservations) == 1 &&
			res.Reservations[0].ID == acc.AccountID+"_"+strconv.FormatInt(b.BookingID, 10)
	})
}
