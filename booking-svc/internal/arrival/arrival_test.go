package arrival_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/libs/fields"
)

// now is the clock of every test: 15 June 2026, 23:30 UTC.
var now = time.Date(2026, 6, 15, 23, 30, 0, 0, time.UTC)

func decode(body []byte) (arrival.Form, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	f := arrival.Read(o, now)
	return f, v.Err()
}

const form = `{
	"bookingId": 12,
	"arriveBy": "Plane",
	"transportNumber": "AZ 610",
	"expectedTime": "9:05",
	"url": "https://forms.example.com/arrival/12",
	"isCompleted": "True",
	"detailInformation": [
		{
			"name": "Ann", "surname": "Smith", "dateOfBirth": "1980-02-29", "nationality": "us",
			"email": "ann@example.com", "phoneNumber": "+1 555 0100",
			"frontDocument": "https://files.example.com/ann-front.jpg",
			"backDocument": "http://files.example.com/ann-back.jpg",
			"address": "1 Main St", "allergies": "peanuts"
		},
		{"name": "Bob"}
	]
}`

func TestRead(t *testing.T) {
	const g = "detailInformation[0]."
	rows := []row{
		tc("valid example", ""),
		tc("everything absent", "",
			set("arriveBy", del), set("transportNumber", del), set("expectedTime", del), set("url", del),
			set("isCompleted", del), set("detailInformation", del)),

		tc("arriveBy any case", "", set("arriveBy", "FERRY")),
		tc("arriveBy coach", "", set("arriveBy", "coach")),
		tc("arriveBy blank clears", "", set("arriveBy", "")),
		tc("arriveBy unknown", "arriveBy: must be one of car, plane, bus, ferry, train, coach, other", set("arriveBy", "boat")),

		tc("transportNumber 50 chars", "", set("transportNumber", chars(50))),
		tc("transportNumber 51 chars", "transportNumber: must be at most 50 characters", set("transportNumber", chars(51))),
		tc("transportNumber as number", "", set("transportNumber", 610)),

		tc("expectedTime 09:05", "", set("expectedTime", "09:05")),
		tc("expectedTime 0:00", "", set("expectedTime", "0:00")),
		tc("expectedTime 23:59", "", set("expectedTime", "23:59")),
		tc("expectedTime 24:00", "expectedTime: must be a 24-hour time H:i, such as 09:05", set("expectedTime", "24:00")),
		tc("expectedTime 12:60", "expectedTime: must be a 24-hour time H:i, such as 09:05", set("expectedTime", "12:60")),
		tc("expectedTime with seconds", "expectedTime: must be a 24-hour time H:i, such as 09:05", set("expectedTime", "09:05:00")),
		tc("expectedTime 12-hour", "expectedTime: must be a 24-hour time H:i, such as 09:05", set("expectedTime", "9:05 PM")),
		tc("expectedTime one-digit minutes", "expectedTime: must be a 24-hour time H:i, such as 09:05", set("expectedTime", "9:5")),

		tc("url http", "", set("url", "http://example.com")),
		tc("url ftp", "url: must be an http or https link", set("url", "ftp://example.com/form")),
		tc("url javascript", "url: must be an http or https link", set("url", "javascript:alert(1)")),
		tc("url relative", "url: must be an http or https link", set("url", "/arrival/12")),
		tc("url with credentials", "url: must be an http or https link", set("url", "https://u:p@example.com/")),
		tc("url with space", "url: must be an http or https link", set("url", "https://example.com/a b")),
		tc("url 2048 chars", "", set("url", "https://example.com/"+chars(2028))),
		tc("url 2049 chars", "url: must be at most 2048 characters", set("url", "https://example.com/"+chars(2029))),

		tc("isCompleted False", "", set("isCompleted", "False")),
		tc("isCompleted boolean", "", set("isCompleted", true)),
		tc("isCompleted 0", "", set("isCompleted", "0")),
		tc("isCompleted yes", "isCompleted: must be a boolean", set("isCompleted", "yes")),

		tc("detailInformation empty list", "", set("detailInformation", []any{})),
		tc("detailInformation empty string", "", set("detailInformation", "")),
		tc("detailInformation 50 guests", "", set("detailInformation", many(50, `{"name":"G"}`))),
		tc("detailInformation 51 guests", "detailInformation: must have at most 50 items", set("detailInformation", many(51, `{"name":"G"}`))),
		tc("detailInformation not a list", "detailInformation: must be an array", set("detailInformation", "Ann")),
		tc("detailInformation item not an object", "detailInformation[1]: must be an object", set("detailInformation[1]", "Bob")),

		tc("name missing", g+"name: is required", set(g+"name", del)),
		tc("name 100 chars", "", set(g+"name", chars(100))),
		tc("name 101 chars", g+"name: must be at most 100 characters", set(g+"name", chars(101))),
		tc("surname 101 chars", g+"surname: must be at most 100 characters", set(g+"surname", chars(101))),
		tc("dateOfBirth today", "", set(g+"dateOfBirth", "2026-06-15")),
		tc("dateOfBirth tomorrow", g+"dateOfBirth: must not be in the future", set(g+"dateOfBirth", "2026-06-16")),
		tc("dateOfBirth impossible", g+"dateOfBirth: must be a valid date (YYYY-MM-DD)", set(g+"dateOfBirth", "1981-02-29")),
		tc("dateOfBirth European order", g+"dateOfBirth: must be a valid date (YYYY-MM-DD)", set(g+"dateOfBirth", "29/02/1980")),
		tc("nationality lower case", "", set(g+"nationality", "it")),
		tc("nationality unknown", g+"nationality: must be an ISO 3166-1 alpha-2 country code", set(g+"nationality", "XX")),
		tc("nationality name", g+"nationality: must be an ISO 3166-1 alpha-2 country code", set(g+"nationality", "Italian")),
		tc("email invalid", g+"email: must be a valid email address", set(g+"email", "ann@")),
		tc("email blank", "", set(g+"email", "")),
		tc("phoneNumber 31 chars", g+"phoneNumber: must be at most 30 characters", set(g+"phoneNumber", chars(31))),
		tc("frontDocument not a link", g+"frontDocument: must be an http or https link", set(g+"frontDocument", "passport.jpg")),
		tc("backDocument data URL", g+"backDocument: must be an http or https link", set(g+"backDocument", "data:image/png;base64,AAAA")),
		tc("address 501 chars", g+"address: must be at most 500 characters", set(g+"address", chars(501))),
		tc("allergies 1000 chars", "", set(g+"allergies", chars(1000))),
		tc("allergies 1001 chars", g+"allergies: must be at most 1000 characters", set(g+"allergies", chars(1001))),
		tc("second guest path", "detailInformation[1].email: must be a valid email address", set("detailInformation[1].email", "bob")),

		tc("every violation listed",
			"arriveBy: must be one of car, plane, bus, ferry, train, coach, other\nexpectedTime: must be a 24-hour time H:i, such as 09:05\n"+g+"nationality: must be an ISO 3166-1 alpha-2 country code",
			set("arriveBy", "horse"), set("expectedTime", "noon"), set(g+"nationality", "ZZ")),
	}
	check(t, form, rows, func(b []byte) error {
		_, err := decode(b)
		return err
	})
}

func TestReadValues(t *testing.T) {
	f, err := decode([]byte(form))
	if err != nil {
		t.Fatal(err)
	}
	if *f.ArriveBy != "plane" || *f.TransportNumber != "AZ 610" || *f.ExpectedTime != "09:05" ||
		*f.URL != "https://forms.example.com/arrival/12" || !*f.IsCompleted {
		t.Fatalf("form %+v", f)
	}
	want := []arrival.Guest{{
		Name: "Ann", Surname: "Smith", DateOfBirth: time.Date(1980, 2, 29, 0, 0, 0, 0, time.UTC), Nationality: "US",
		Email: "ann@example.com", PhoneNumber: "+1 555 0100", FrontDocument: "https://files.example.com/ann-front.jpg",
		BackDocument: "http://files.example.com/ann-back.jpg", Address: "1 Main St", Allergies: "peanuts",
	}, {Name: "Bob"}}
	if !reflect.DeepEqual(*f.DetailInformation, want) {
		t.Fatalf("guests\n got %+v\nwant %+v", *f.DetailInformation, want)
	}
}

func TestApply(t *testing.T) {
	stored := arrival.Arrival{
		ArriveBy: "car", TransportNumber: "", ExpectedTime: "15:00", URL: "https://a.example/x",
		IsCompleted: true, Guests: []arrival.Guest{{Name: "Ann"}, {Name: "Bob"}},
	}
	for _, c := range []struct {
		name string
		body string
		want arrival.Arrival
	}{
		{"nothing sent keeps everything", `{"bookingId":1}`, stored},
		{"sent fields replace", `{"arriveBy":"Train","expectedTime":"8:30","isCompleted":"False"}`, arrival.Arrival{
			ArriveBy: "train", ExpectedTime: "08:30", URL: "https://a.example/x", IsCompleted: false,
			Guests: stored.Guests}},
		{"blank clears a text field", `{"url":"","arriveBy":""}`, arrival.Arrival{
			ExpectedTime: "15:00", IsCompleted: true, Guests: stored.Guests}},
		{"null is not sent", `{"url":null,"detailInformation":null}`, stored},
		{"guest list replaced", `{"detailInformation":[{"name":"Cy"}]}`, arrival.Arrival{
			ArriveBy: "car", ExpectedTime: "15:00", URL: "https://a.example/x", IsCompleted: true,
			Guests: []arrival.Guest{{Name: "Cy"}}}},
		{"empty guest list removes guests", `{"detailInformation":[]}`, arrival.Arrival{
			ArriveBy: "car", ExpectedTime: "15:00", URL: "https://a.example/x", IsCompleted: true,
			Guests: []arrival.Guest{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := decode([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got := f.Apply(stored)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}
