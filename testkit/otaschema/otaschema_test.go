package otaschema_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/testkit/otaschema"
)

const availRQ = `<OTA_HotelAvailNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" EchoToken="e1" TimeStamp="2026-07-06T15:27:41+00:00" Version="1.0">
<POS><Source><RequestorID Type="22" ID="VROS"/></Source></POS>
<AvailStatusMessages HotelCode="HOTEL">
<AvailStatusMessage BookingLimit="1"><StatusApplicationControl Start="2026-03-01" End="2026-03-04" InvTypeCode="SUP"/></AvailStatusMessage>
</AvailStatusMessages>
</OTA_HotelAvailNotifRQ>`

func envelope(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header>` +
		`<wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" soap:mustUnderstand="1">` +
		`<wsse:UsernameToken><wsse:Username>u</wsse:Username><wsse:Password>p</wsse:Password></wsse:UsernameToken></wsse:Security>` +
		`</soap:Header><soap:Body>` + body + `</soap:Body></soap:Envelope>`
}

func TestValidate(t *testing.T) {
	v, err := otaschema.Start(otaschema.Messages...)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	cases := []struct {
		name, xml string
		want      string // "" valid, else a fragment of the problem
	}{
		{"valid", availRQ, ""},
		{"valid in a SOAP envelope", envelope(availRQ), ""},
		{"unknown attribute", strings.Replace(availRQ, `BookingLimit="1"`, `BookingLimit="1" Rooms="2"`, 1), "Rooms"},
		{"wrong type", strings.Replace(availRQ, `BookingLimit="1"`, `BookingLimit="one"`, 1), "BookingLimit"},
		{"bad date", strings.Replace(availRQ, `Start="2026-03-01"`, `Start="01/03/2026"`, 1), "01/03/2026"},
		{"missing required element", strings.Replace(availRQ, `<AvailStatusMessage BookingLimit="1"><StatusApplicationControl Start="2026-03-01" End="2026-03-04" InvTypeCode="SUP"/></AvailStatusMessage>`, ``, 1), "AvailStatusMessage"},
		{"missing required attribute", strings.Replace(availRQ, ` Version="1.0"`, ``, 1), "Version"},
		{"unknown element in envelope", envelope(strings.Replace(availRQ, `</POS>`, `</POS><Extra/>`, 1)), "Extra"},
		{"wrong namespace", strings.Replace(availRQ, `http://www.opentravel.org/OTA/2003/05`, `urn:x`, 1), "namespace"},
		{"unknown root", `<OTA_Nothing xmlns="http://www.opentravel.org/OTA/2003/05"/>`, "OTA_Nothing"},
		{"not XML", `<OTA_HotelAvailNotifRQ`, "1:"},
		{"empty body", envelope(``), "no message"},
		{"two messages", envelope(availRQ + availRQ), "more than one"},
		{"doctype refused", `<!DOCTYPE x [<!ENTITY a "b">]>` + availRQ, "DOCTYPE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v.Validate([]byte(c.xml))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a valid message: %v", err)
				}
				return
			}
			var se *otaschema.Error
			if !errors.As(err, &se) {
				t.Fatalf("want a schema error naming %q, got %v", c.want, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want a problem naming %q, got %v", c.want, err)
			}
		})
	}
}

func TestLinesOfTheEnvelope(t *testing.T) {
	v, err := otaschema.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	msg := envelope(strings.Replace(availRQ, `BookingLimit="1"`, `BookingLimit="-1"`, 1))
	err = v.Validate([]byte(msg))
	var se *otaschema.Error
	if !errors.As(err, &se) || !strings.HasPrefix(se.Problems[0], "5:") {
		t.Fatalf("want the problem on line 5 of the envelope, got %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	v, err := otaschema.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	bad := strings.Replace(availRQ, `BookingLimit="1"`, `BookingLimit="x"`, 1)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg, valid := availRQ, true
			if i%2 == 1 {
				msg, valid = bad, false
			}
			if err := v.Validate([]byte(msg)); (err == nil) != valid {
				t.Errorf("message %d: valid %v, got %v", i, valid, err)
			}
		}()
	}
	wg.Wait()
}

func TestPreloadOfAnUnknownName(t *testing.T) {
	v, err := otaschema.Start("OTA_Nothing", "../etc/passwd", "OTA_HotelAvailNotifRQ")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Validate([]byte(availRQ)); err != nil {
		t.Fatal(err)
	}
	if err := v.Validate([]byte(`<OTA_Nothing xmlns="http://www.opentravel.org/OTA/2003/05"/>`)); err == nil || !strings.Contains(err.Error(), "no OpenTravel schema") {
		t.Fatalf("unknown root: %v", err)
	}
}
