package fakepmsx

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reservation is one reservation the fake pushes, in one of its states.
type Reservation struct {
	ID     string // the reservation's UniqueID (Type 14)
	Status string // "new", "modified" or "cancelled"
	// Modify: send it as an OTA_HotelResModifyNotifRQ (HotelResModify) rather than an
	// OTA_HotelResNotifRQ (a modification or cancellation only).
	Modify             bool
	Channel            string // BookingChannel CompanyName Code ("BookingCom")
	HotelCode          string
	RoomType, RatePlan string
	Checkin, Checkout  string
	Adults, Children   int
	Currency, Total    string
	// Commission is the channel's commission (ResGlobalInfo/TotalCommissions), "": none.
	Commission   string
	FirstName    string
	LastName     string
	Email, Phone string
	Country      string
	Notes        string
	// Card adds a payment card guarantee (number 4111111111111111, CVC 737) that the PMS
	// must never keep in clear.
	Card bool
	// Modified is the reservation's LastModifyDateTime (zero: now).
	Modified time.Time
}

// Card data the pushed reservations carry when Reservation.Card is set.
const (
	CardNumber = "4111111111111111"
	CardCVC    = "737"
)

func resStatus(r Reservation) string {
	switch r.Status {
	case "modified":
		return "Modify"
	case "cancelled":
		return "Cancel"
	}
	return "Commit"
}

// XML builds the message pushing rs (schema-valid: check with Validate), with echo as its
// EchoToken: an OTA_HotelResModifyNotifRQ when the first is Modify, else an
// OTA_HotelResNotifRQ.
func XML(echo string, at time.Time, rs ...Reservation) []byte {
	root, list, item := "OTA_HotelResNotifRQ", "HotelReservations", "HotelReservation"
	if len(rs) > 0 && rs[0].Modify {
		root, list, item = "OTA_HotelResModifyNotifRQ", "HotelResModifies", "HotelResModify"
	}
	var b strings.Builder
	b.WriteString(`<` + root + ` xmlns="` + NSOTA + `"` + attr("EchoToken", echo) + attr("TimeStamp", stamp(at)) + ` Version="1.0">`)
	b.WriteString(`<POS><Source><RequestorID Type="22" ID="SITEMINDER"/></Source></POS>`)
	b.WriteString(`<` + list + `>`)
	for _, r := range rs {
		mod := r.Modified
		if mod.IsZero() {
			mod = at
		}
		b.WriteString(`<` + item + attr("CreateDateTime", stamp(mod.Add(-time.Hour))) + attr("LastModifyDateTime", stamp(mod)) + attr("ResStatus", resStatus(r)) + `>`)
		if r.Channel != "" {
			b.WriteString(`<POS><Source><BookingChannel Type="7" Primary="true"><CompanyName` + attr("Code", r.Channel) + `>` + esc(r.Channel) + `</CompanyName></BookingChannel></Source></POS>`)
		}
		b.WriteString(`<UniqueID Type="14"` + attr("ID", r.ID) + `/>`)
		b.WriteString(`<RoomStays><RoomStay>`)
		b.WriteString(`<RoomTypes><RoomType` + attr("RoomTypeCode", r.RoomType) + `/></RoomTypes>`)
		if r.RatePlan != "" {
			b.WriteString(`<RatePlans><RatePlan` + attr("RatePlanCode", r.RatePlan) + `/></RatePlans>`)
		}
		if r.Adults > 0 || r.Children > 0 {
			b.WriteString(`<GuestCounts>`)
			if r.Adults > 0 {
				b.WriteString(`<GuestCount AgeQualifyingCode="10" Count="` + strconv.Itoa(r.Adults) + `"/>`)
			}
			if r.Children > 0 {
				b.WriteString(`<GuestCount AgeQualifyingCode="8" Count="` + strconv.Itoa(r.Children) + `"/>`)
			}
			b.WriteString(`</GuestCounts>`)
		}
		b.WriteString(`<TimeSpan` + attr("Start", r.Checkin) + attr("End", r.Checkout) + `/>`)
		if r.Total != "" {
			b.WriteString(`<Total` + attr("AmountAfterTax", r.Total) + attr("CurrencyCode", r.Currency) + `/>`)
		}
		b.WriteString(`<BasicPropertyInfo` + attr("HotelCode", r.HotelCode) + `/>`)
		b.WriteString(`</RoomStay></RoomStays>`)
		if r.FirstName != "" || r.LastName != "" {
			b.WriteString(`<ResGuests><ResGuest ResGuestRPH="1" PrimaryIndicator="true"><Profiles><ProfileInfo><Profile ProfileType="1"><Customer>`)
			b.WriteString(`<PersonName>`)
			if r.FirstName != "" {
				b.WriteString(`<GivenName>` + esc(r.FirstName) + `</GivenName>`)
			}
			b.WriteString(`<Surname>` + esc(r.LastName) + `</Surname></PersonName>`)
			if r.Phone != "" {
				b.WriteString(`<Telephone` + attr("PhoneNumber", r.Phone) + `/>`)
			}
			if r.Email != "" {
				b.WriteString(`<Email>` + esc(r.Email) + `</Email>`)
			}
			if r.Country != "" {
				b.WriteString(`<Address><CountryName` + attr("Code", r.Country) + `/></Address>`)
			}
			b.WriteString(`</Customer></Profile></ProfileInfo></Profiles></ResGuest></ResGuests>`)
		}
		b.WriteString(`<ResGlobalInfo>`)
		if r.Notes != "" {
			b.WriteString(`<Comments><Comment GuestViewable="true"><Text>` + esc(r.Notes) + `</Text></Comment></Comments>`)
		}
		if r.Card {
			b.WriteString(`<Guarantee><GuaranteesAccepted><GuaranteeAccepted><PaymentCard CardCode="VI" ExpireDate="1230">` +
				`<CardHolderName>` + esc(strings.TrimSpace(r.FirstName+" "+r.LastName)) + `</CardHolderName>` +
				`<CardNumber><PlainText>` + CardNumber + `</PlainText></CardNumber>` +
				`<SeriesCode><PlainText>` + CardCVC + `</PlainText></SeriesCode>` +
				`</PaymentCard></GuaranteeAccepted></GuaranteesAccepted></Guarantee>`)
		}
		if r.Total != "" {
			b.WriteString(`<Total` + attr("AmountAfterTax", r.Total) + attr("CurrencyCode", r.Currency) + `/>`)
		}
		if r.Commission != "" {
			b.WriteString(`<TotalCommissions><CommissionPayableAmount` + attr("Amount", r.Commission) + attr("CurrencyCode", r.Currency) +
				`/></TotalCommissions>`)
		}
		b.WriteString(`<BasicPropertyInfo` + attr("HotelCode", r.HotelCode) + `/>`)
		b.WriteString(`</ResGlobalInfo>`)
		b.WriteString(`</` + item + `>`)
	}
	b.WriteString(`</` + list + `></` + root + `>`)
	return []byte(b.String())
}

// Reply is a PMS's answer to a pushed message, as read.
type Reply struct {
	HTTPStatus int
	Body       []byte
	Root       string // OTA_HotelResNotifRS, OTA_HotelResModifyNotifRS
	EchoToken  string
	Success    bool
	Errors     []OTAError
	Warnings   []OTAError
	// BookingIDs maps each reservation's UniqueID to the PMS's id
	// (HotelReservationIDs/HotelReservationID ResID_Value).
	BookingIDs map[string]string
}

type rsRead struct {
	XMLName   xml.Name
	EchoToken string     `xml:"EchoToken,attr"`
	Success   *struct{}  `xml:"Success"`
	Errors    []OTAError `xml:"Errors>Error"`
	Warnings  []OTAError `xml:"Warnings>Warning"`
	Res       []struct {
		UniqueID []struct {
			Type string `xml:"Type,attr"`
			ID   string `xml:"ID,attr"`
		} `xml:"UniqueID"`
		IDs []struct {
			Type  string `xml:"ResID_Type,attr"`
			Value string `xml:"ResID_Value,attr"`
		} `xml:"ResGlobalInfo>HotelReservationIDs>HotelReservationID"`
	} `xml:"HotelReservations>HotelReservation"`
	Mods []struct {
		UniqueID []struct {
			Type string `xml:"Type,attr"`
			ID   string `xml:"ID,attr"`
		} `xml:"UniqueID"`
		IDs []struct {
			Type  string `xml:"ResID_Type,attr"`
			Value string `xml:"ResID_Value,attr"`
		} `xml:"ResGlobalInfo>HotelReservationIDs>HotelReservationID"`
	} `xml:"HotelResModifies>HotelResModify"`
}

// Push sends rs to a PMS's inbound url in one message with the credentials user and pass,
// as pmsXchange pushes reservations: the message is validated against the schemas before it
// is sent, and the answer after (an answer that is not a schema-valid RS in a SOAP envelope
// is an error). pass "" sends no WS-Security header.
func (s *Server) Push(ctx context.Context, url, user, pass string, rs ...Reservation) (*Reply, error) {
	echo := fmt.Sprintf("push-%d", time.Now().UnixNano())
	body := Envelope(user, pass, XML(echo, time.Now(), rs...))
	if err := s.validator.Validate(body); err != nil {
		return nil, fmt.Errorf("fakepmsx: the pushed message is not schema-valid: %w\n%s", err, body)
	}
	return s.PushRaw(ctx, url, body)
}

// PushRaw sends body as it is (a malformed message, for the tests) and reads the answer
// like Push.
func (s *Server) PushRaw(ctx context.Context, url string, body []byte) (*Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	rep := &Reply{HTTPStatus: resp.StatusCode, Body: b, BookingIDs: map[string]string{}}
	if err := s.validator.Validate(b); err != nil {
		return rep, fmt.Errorf("fakepmsx: the PMS's answer (%d) is not a schema-valid RS: %w\n%s", resp.StatusCode, err, b)
	}
	_, _, _, _, root, answer, err := readEnvelope(b)
	if err != nil {
		return rep, fmt.Errorf("fakepmsx: the PMS's answer (%d): %w\n%s", resp.StatusCode, err, b)
	}
	var m rsRead
	if err := xml.Unmarshal(answer, &m); err != nil {
		return rep, err
	}
	rep.Root, rep.EchoToken = root.Local, m.EchoToken
	rep.Success, rep.Errors, rep.Warnings = m.Success != nil, m.Errors, m.Warnings
	for _, r := range m.Res {
		for _, u := range r.UniqueID {
			for _, id := range r.IDs {
				rep.BookingIDs[u.ID] = id.Value
			}
		}
	}
	for _, r := range m.Mods {
		for _, u := range r.UniqueID {
			for _, id := range r.IDs {
				rep.BookingIDs[u.ID] = id.Value
			}
		}
	}
	return rep, nil
}
