package opentravel

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// The pushed messages and their answers.
const (
	resNotifRQ       = "OTA_HotelResNotifRQ"
	resNotifRS       = "OTA_HotelResNotifRS"
	resModifyNotifRQ = "OTA_HotelResModifyNotifRQ"
	resModifyNotifRS = "OTA_HotelResModifyNotifRS"
)

type resNotifIn struct {
	XMLName      xml.Name
	EchoToken    string          `xml:"EchoToken,attr"`
	TimeStamp    string          `xml:"TimeStamp,attr"`
	Version      string          `xml:"Version,attr"`
	Channel      []companyName   `xml:"POS>Source>BookingChannel>CompanyName"`
	Reservations *reservationsIn `xml:"HotelReservations"`
	Modifies     *modifiesIn     `xml:"HotelResModifies"`
}

type reservationsIn struct {
	List []reservationIn `xml:"HotelReservation"`
}

type modifiesIn struct {
	List []reservationIn `xml:"HotelResModify"`
}

type companyName struct {
	Code string `xml:"Code,attr"`
	Name string `xml:",chardata"`
}

type amount struct {
	AfterTax     string `xml:"AmountAfterTax,attr"`
	BeforeTax    string `xml:"AmountBeforeTax,attr"`
	CurrencyCode string `xml:"CurrencyCode,attr"`
}

type propertyInfo struct {
	HotelCode string `xml:"HotelCode,attr"`
}

type reservationIn struct {
	XMLName      xml.Name
	Attrs        []xml.Attr    `xml:",any,attr"`
	ResStatus    string        `xml:"ResStatus,attr"`
	LastModified string        `xml:"LastModifyDateTime,attr"`
	Created      string        `xml:"CreateDateTime,attr"`
	Channel      []companyName `xml:"POS>Source>BookingChannel>CompanyName"`
	UniqueIDs    []struct {
		Type      string `xml:"Type,attr"`
		ID        string `xml:"ID,attr"`
		IDContext string `xml:"ID_Context,attr"`
	} `xml:"UniqueID"`
	RoomStays []struct {
		RoomTypes []struct {
			Code string `xml:"RoomTypeCode,attr"`
		} `xml:"RoomTypes>RoomType"`
		RatePlans []struct {
			Code string `xml:"RatePlanCode,attr"`
		} `xml:"RatePlans>RatePlan"`
		RoomRates []struct {
			RoomTypeCode string `xml:"RoomTypeCode,attr"`
			RatePlanCode string `xml:"RatePlanCode,attr"`
		} `xml:"RoomRates>RoomRate"`
		GuestCounts []struct {
			AgeQualifyingCode string `xml:"AgeQualifyingCode,attr"`
			Count             string `xml:"Count,attr"`
		} `xml:"GuestCounts>GuestCount"`
		TimeSpan *struct {
			Start string `xml:"Start,attr"`
			End   string `xml:"End,attr"`
		} `xml:"TimeSpan"`
		Total    *amount       `xml:"Total"`
		Property *propertyInfo `xml:"BasicPropertyInfo"`
	} `xml:"RoomStays>RoomStay"`
	Customers []struct {
		GivenName []string `xml:"PersonName>GivenName"`
		Surname   string   `xml:"PersonName>Surname"`
		Telephone []struct {
			Number string `xml:"PhoneNumber,attr"`
		} `xml:"Telephone"`
		Email   []string `xml:"Email"`
		Country []struct {
			Code string `xml:"Code,attr"`
		} `xml:"Address>CountryName"`
	} `xml:"ResGuests>ResGuest>Profiles>ProfileInfo>Profile>Customer"`
	Global *struct {
		Comments        []string      `xml:"Comments>Comment>Text"`
		SpecialRequests []string      `xml:"SpecialRequests>SpecialRequest>Text"`
		Total           *amount       `xml:"Total"`
		Property        *propertyInfo `xml:"BasicPropertyInfo"`
		// Commission is the reservation's TotalCommissions (CommissionType): the commission
		// payable to the selling channel for all its rate segments.
		Commission *struct {
			Amount       string `xml:"Amount,attr"`
			CurrencyCode string `xml:"CurrencyCode,attr"`
		} `xml:"TotalCommissions>CommissionPayableAmount"`
	} `xml:"ResGlobalInfo"`
	Inner []byte `xml:",innerxml"`
}

func inboundErr(field, format string, args ...any) error {
	return &channel.InboundError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Receive reads a pushed OTA_HotelResNotifRQ or OTA_HotelResModifyNotifRQ: its envelope's
// UsernameToken must be the connection's credentials (channel.ErrUnauthorized), and each
// reservation becomes a revision: new, modified or cancelled by its ResStatus, its
// RevisionID derived from its UniqueID, ResStatus and LastModifyDateTime (else the message's
// TimeStamp) so that a message pushed again is a duplicate, ordered by that time. Card data
// is not read; Raw is the reservation with card numbers and CVCs masked.
func (a *Adapter) Receive(_ context.Context, c channel.Connection, b []byte) (channel.Inbound, error) {
	in := channel.Inbound{Kind: channel.KindReservation}
	var env envelopeIn
	if err := xml.Unmarshal(b, &env); err != nil {
		return in, inboundErr("Envelope", "not XML: %v", err)
	}
	if env.XMLName.Space != nsSOAP || env.XMLName.Local != "Envelope" {
		return in, inboundErr("Envelope", "the message must be a SOAP 1.1 envelope")
	}
	tok := (*struct {
		Username string `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Username"`
		Password *struct {
			Type  string `xml:"Type,attr"`
			Value string `xml:",chardata"`
		} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Password"`
	})(nil)
	if env.Header != nil && env.Header.Security != nil {
		tok = env.Header.Security.UsernameToken
	}
	if tok == nil || tok.Password == nil || (tok.Password.Type != "" && tok.Password.Type != passwordText) ||
		c.Username == "" || c.Password == "" ||
		subtle.ConstantTimeCompare([]byte(tok.Username), []byte(c.Username)) != 1 ||
		subtle.ConstantTimeCompare([]byte(tok.Password.Value), []byte(c.Password)) != 1 {
		return in, channel.ErrUnauthorized
	}
	var m resNotifIn
	name, err := decodeBody(b, func(n xml.Name) any {
		if n.Space == nsOTA && (n.Local == resNotifRQ || n.Local == resModifyNotifRQ) {
			return &m
		}
		return nil
	})
	if err != nil {
		field := "Envelope"
		var be bodyError
		switch {
		case errors.Is(err, errNotEnvelope):
		case errors.As(err, &be):
			field = "Body"
		case name.Local != "":
			field = name.Local
		}
		return in, inboundErr(field, "%v", err)
	}
	if name.Space != nsOTA || (name.Local != resNotifRQ && name.Local != resModifyNotifRQ) {
		return in, inboundErr("Body", "%s is not %s or %s in the namespace %s", name.Local, resNotifRQ, resModifyNotifRQ, nsOTA)
	}
	root := name.Local
	in.Message = root + " " + m.EchoToken
	if m.Version == "" {
		return in, inboundErr(root+"@Version", "is required")
	}
	msgTime, err := parseTime(m.TimeStamp)
	if err != nil {
		return in, inboundErr(root+"@TimeStamp", "%q is not a date and time", m.TimeStamp)
	}
	var list []reservationIn
	item := "HotelReservation"
	if root == resNotifRQ && m.Reservations != nil {
		list = m.Reservations.List
	}
	if root == resModifyNotifRQ && m.Modifies != nil {
		list, item = m.Modifies.List, "HotelResModify"
	}
	if len(list) == 0 {
		return in, inboundErr(root, "holds no %s", item)
	}
	msgChannel := firstChannel(m.Channel)
	for i, r := range list {
		rev, err := revision(c, r, fmt.Sprintf("%s[%d]", item, i+1), root == resModifyNotifRQ, msgTime, msgChannel)
		if err != nil {
			return in, err
		}
		in.Revisions = append(in.Revisions, rev)
	}
	return in, nil
}

func firstChannel(cs []companyName) string {
	for _, c := range cs {
		if v := strings.TrimSpace(c.Code); v != "" {
			return v
		}
		if v := strings.TrimSpace(c.Name); v != "" {
			return v
		}
	}
	return ""
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not a date and time")
}

// parseDate reads a TimeSpan's Start or End: a date, or a date and time (its date).
func parseDate(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 10 {
		if _, err := time.Parse(time.DateOnly, s[:10]); err == nil && (len(s) == 10 || s[10] == 'T') {
			return s[:10], true
		}
	}
	return "", false
}

func revision(c channel.Connection, r reservationIn, at string, modify bool, msgTime time.Time, msgChannel string) (channel.Revision, error) {
	rev := channel.Revision{ConnectionID: c.ID}
	for _, u := range r.UniqueIDs {
		if u.ID != "" && (u.Type == "14" || u.Type == "") && rev.ReservationID == "" {
			rev.ReservationID = u.ID
		}
	}
	if rev.ReservationID == "" {
		return rev, inboundErr(at+"/UniqueID", "a UniqueID of Type 14 with an ID is required")
	}
	switch strings.ToLower(strings.TrimSpace(r.ResStatus)) {
	case "", "commit", "book", "reserved", "initiate":
		rev.Status = channel.RevisionNew
		if modify {
			rev.Status = channel.RevisionModified
		}
	case "modify":
		rev.Status = channel.RevisionModified
	case "cancel", "cancelled":
		rev.Status = channel.RevisionCancelled
	default:
		return rev, inboundErr(at+"@ResStatus", "%q is not Commit, Book, Reserved, Modify, Cancel or Cancelled", r.ResStatus)
	}
	when := msgTime
	if r.LastModified != "" {
		t, err := parseTime(r.LastModified)
		if err != nil {
			return rev, inboundErr(at+"@LastModifyDateTime", "%q is not a date and time", r.LastModified)
		}
		when = t
	}
	rev.Order = when.UnixNano()
	sum := sha256.Sum256([]byte(rev.ReservationID + "\x00" + rev.Status + "\x00" + when.UTC().Format(time.RFC3339Nano)))
	rev.RevisionID = "ota-" + hex.EncodeToString(sum[:12])
	rev.Channel = firstChannel(r.Channel)
	if rev.Channel == "" {
		rev.Channel = msgChannel
	}
	if rev.Channel == "" {
		rev.Channel = "SiteMinder"
	}
	if len(r.RoomStays) > 1 {
		return rev, inboundErr(at+"/RoomStays", "one RoomStay per reservation (a rental is one unit)")
	}
	need := rev.Status != channel.RevisionCancelled
	if len(r.RoomStays) == 0 {
		if need {
			return rev, inboundErr(at+"/RoomStays/RoomStay", "is required")
		}
	} else {
		rs := r.RoomStays[0]
		for _, t := range rs.RoomTypes {
			if t.Code != "" && rev.RoomTypeID == "" {
				rev.RoomTypeID = t.Code
			}
		}
		for _, p := range rs.RatePlans {
			if p.Code != "" && rev.RemoteRatePlanID == "" {
				rev.RemoteRatePlanID = p.Code
			}
		}
		for _, rr := range rs.RoomRates {
			if rev.RoomTypeID == "" {
				rev.RoomTypeID = rr.RoomTypeCode
			}
			if rev.RemoteRatePlanID == "" {
				rev.RemoteRatePlanID = rr.RatePlanCode
			}
		}
		for _, g := range rs.GuestCounts {
			n, err := strconv.Atoi(g.Count)
			if err != nil || n < 0 {
				return rev, inboundErr(at+"/RoomStay/GuestCounts/GuestCount@Count", "%q is not a count", g.Count)
			}
			switch g.AgeQualifyingCode {
			case "8", "7": // child, infant
				rev.Children += n
			default: // 10: adult
				rev.Adults += n
			}
		}
		if ts := rs.TimeSpan; ts != nil {
			var ok bool
			if rev.Checkin, ok = parseDate(ts.Start); !ok {
				return rev, inboundErr(at+"/RoomStay/TimeSpan@Start", "%q is not a date", ts.Start)
			}
			if rev.Checkout, ok = parseDate(ts.End); !ok {
				return rev, inboundErr(at+"/RoomStay/TimeSpan@End", "%q is not a date", ts.End)
			}
		} else if need {
			return rev, inboundErr(at+"/RoomStay/TimeSpan", "is required")
		}
		if rs.Property != nil {
			rev.RemotePropertyID = rs.Property.HotelCode
		}
		if rs.Total != nil {
			if err := setTotal(&rev, rs.Total, at+"/RoomStay/Total"); err != nil {
				return rev, err
			}
		}
		if need && rev.RoomTypeID == "" {
			return rev, inboundErr(at+"/RoomStay/RoomTypes/RoomType@RoomTypeCode", "is required")
		}
	}
	if g := r.Global; g != nil {
		if g.Property != nil && g.Property.HotelCode != "" {
			rev.RemotePropertyID = g.Property.HotelCode
		}
		if g.Total != nil {
			if err := setTotal(&rev, g.Total, at+"/ResGlobalInfo/Total"); err != nil {
				return rev, err
			}
		}
		if c := g.Commission; c != nil && c.Amount != "" {
			field := at + "/ResGlobalInfo/TotalCommissions/CommissionPayableAmount"
			if f, err := strconv.ParseFloat(c.Amount, 64); err != nil || f < 0 || strings.ContainsAny(c.Amount, "eE+") {
				return rev, inboundErr(field+"@Amount", "%q is not an amount", c.Amount)
			}
			if cr, ok := new(big.Rat).SetString(c.Amount); ok && rev.Total != "" {
				if t, ok := new(big.Rat).SetString(rev.Total); ok && cr.Cmp(t) > 0 {
					return rev, inboundErr(field+"@Amount", "%s is more than the reservation's total %s", c.Amount, rev.Total)
				}
			}
			if c.CurrencyCode != "" && rev.Currency != "" && !strings.EqualFold(c.CurrencyCode, rev.Currency) {
				return rev, inboundErr(field+"@CurrencyCode", "is %s, the reservation's total is in %s", c.CurrencyCode, rev.Currency)
			}
			rev.Commission = c.Amount
		}
		var notes []string
		for _, t := range append(append([]string{}, g.Comments...), g.SpecialRequests...) {
			if t = strings.TrimSpace(t); t != "" {
				notes = append(notes, t)
			}
		}
		rev.Notes = strings.Join(notes, "\n")
	}
	if need && rev.RemotePropertyID == "" {
		return rev, inboundErr(at+"/ResGlobalInfo/BasicPropertyInfo@HotelCode", "is required")
	}
	for _, cu := range r.Customers {
		if cu.Surname == "" && len(cu.GivenName) == 0 {
			continue
		}
		rev.Guest = channel.Guest{FirstName: strings.TrimSpace(strings.Join(cu.GivenName, " ")), LastName: strings.TrimSpace(cu.Surname)}
		if len(cu.Email) > 0 {
			rev.Guest.Email = strings.TrimSpace(cu.Email[0])
		}
		if len(cu.Telephone) > 0 {
			rev.Guest.Phone = cu.Telephone[0].Number
		}
		if len(cu.Country) > 0 {
			rev.Guest.Country = strings.ToUpper(cu.Country[0].Code)
		}
		break
	}
	rev.Raw = raw(r)
	return rev, nil
}

func setTotal(rev *channel.Revision, t *amount, at string) error {
	v := t.AfterTax
	if v == "" {
		v = t.BeforeTax
	}
	if v == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 {
		return inboundErr(at+"@AmountAfterTax", "%q is not an amount", v)
	}
	rev.Total = v
	if t.CurrencyCode != "" {
		rev.Currency = strings.ToUpper(t.CurrencyCode)
	}
	return nil
}

// raw is a reservation's XML as received, card data masked.
func raw(r reservationIn) []byte {
	var b strings.Builder
	b.WriteString("<" + r.XMLName.Local)
	for _, a := range r.Attrs {
		if a.Name.Space != "" {
			continue
		}
		b.WriteString(" " + a.Name.Local + `="`)
		xml.EscapeText(&b, []byte(a.Value))
		b.WriteString(`"`)
	}
	if r.ResStatus != "" {
		b.WriteString(` ResStatus="`)
		xml.EscapeText(&b, []byte(r.ResStatus))
		b.WriteString(`"`)
	}
	for _, a := range [][2]string{{"CreateDateTime", r.Created}, {"LastModifyDateTime", r.LastModified}} {
		if a[1] != "" {
			b.WriteString(" " + a[0] + `="`)
			xml.EscapeText(&b, []byte(a[1]))
			b.WriteString(`"`)
		}
	}
	b.WriteString(">")
	b.Write(r.Inner)
	b.WriteString("</" + r.XMLName.Local + ">")
	return Mask([]byte(b.String()))
}

// --- the answers ---

type rsOut struct {
	XMLName xml.Name
	NS      string `xml:"xmlns,attr"`
	payloadAttrs
	Success  *struct{}        `xml:"Success"`
	Warnings *warningsOut     `xml:"Warnings,omitempty"`
	Res      *reservationsOut `xml:"HotelReservations,omitempty"`
	Mods     *modifiesOut     `xml:"HotelResModifies,omitempty"`
	Errors   *errorsOut       `xml:"Errors,omitempty"`
}

type warningsOut struct {
	List []otaError `xml:"Warning"`
}

type errorsOut struct {
	List []otaError `xml:"Error"`
}

type reservationsOut struct {
	List []reservationOut `xml:"HotelReservation"`
}

type modifiesOut struct {
	List []reservationOut `xml:"HotelResModify"`
}

type uniqueID struct {
	Type      string `xml:"Type,attr"`
	ID        string `xml:"ID,attr"`
	IDContext string `xml:"ID_Context,attr,omitempty"`
}

type reservationOut struct {
	UniqueIDs []uniqueID `xml:"UniqueID"`
	Global    struct {
		ID struct {
			Type   string `xml:"ResID_Type,attr"`
			Value  string `xml:"ResID_Value,attr"`
			Source string `xml:"ResID_Source,attr"`
		} `xml:"HotelReservationIDs>HotelReservationID"`
		Property propertyInfo `xml:"BasicPropertyInfo"`
	} `xml:"ResGlobalInfo"`
}

// Reply answers a pushed message with its RS (OTA_HotelResNotifRS or
// OTA_HotelResModifyNotifRS, the EchoToken echoed): Success with each applied reservation
// (its UniqueID, and vros's booking id as a second UniqueID of Type 14 with ID_Context "vros"
// and as its HotelReservationID), with a Warning (Type 3, RecordID the reservation) per
// reservation recorded as a conflict; Errors when every reservation is a conflict. err set:
// Errors (Type 4 for bad credentials, 401; Type 10 for an unreadable message, 400; Type 12
// otherwise, 500: the sender is to push it again).
func (a *Adapter) Reply(in channel.Inbound, applied []channel.Applied, err error) (string, []byte, int) {
	root, echo, _ := strings.Cut(in.Message, " ")
	rsName := resNotifRS
	if root == resModifyNotifRQ {
		rsName = resModifyNotifRS
	}
	rs := rsOut{XMLName: xml.Name{Local: rsName}, NS: nsOTA, payloadAttrs: a.attrs()}
	rs.EchoToken = echo
	status := http.StatusOK
	byRev := map[string]channel.Applied{}
	for _, ap := range applied {
		byRev[ap.RevisionID] = ap
	}
	if err == nil {
		for _, r := range in.Revisions {
			if _, ok := byRev[r.RevisionID]; !ok {
				err = fmt.Errorf("revision %s of reservation %s was not processed", r.RevisionID, r.ReservationID)
			}
		}
	}
	var ie *channel.InboundError
	switch {
	case errors.Is(err, channel.ErrUnauthorized):
		rs.Errors, status = &errorsOut{[]otaError{{Type: "4", Code: "497", Text: "Invalid WS-Security credentials"}}}, http.StatusUnauthorized
	case errors.As(err, &ie):
		rs.Errors, status = &errorsOut{[]otaError{{Type: "10", Text: ie.Error()}}}, http.StatusBadRequest
	case err != nil:
		rs.Errors, status = &errorsOut{[]otaError{{Type: "12", Text: "not processed, send it again: " + err.Error()}}}, http.StatusInternalServerError
	default:
		var ok []reservationOut
		var conflicts []otaError
		for _, r := range in.Revisions {
			ap := byRev[r.RevisionID]
			if ap.Conflict != nil {
				text := "reservation " + r.ReservationID + " not applied: " + ap.Conflict.Reason
				if ap.Conflict.Message != "" {
					text += ": " + ap.Conflict.Message
				}
				if len(ap.Conflict.Nights) > 0 {
					text += " (nights " + strings.Join(ap.Conflict.Nights, ", ") + ")"
				}
				conflicts = append(conflicts, otaError{Type: "3", RecordID: clip(r.ReservationID, 64), Text: text})
				continue
			}
			id := strconv.FormatInt(ap.BookingID, 10)
			var o reservationOut
			o.UniqueIDs = []uniqueID{{Type: "14", ID: r.ReservationID}, {Type: "14", ID: id, IDContext: "vros"}}
			o.Global.ID.Type, o.Global.ID.Value, o.Global.ID.Source = "14", id, "vros"
			o.Global.Property.HotelCode = r.RemotePropertyID
			ok = append(ok, o)
		}
		if len(ok) == 0 && len(conflicts) > 0 {
			rs.Errors = &errorsOut{conflicts}
			break
		}
		rs.Success = &struct{}{}
		if len(conflicts) > 0 {
			rs.Warnings = &warningsOut{conflicts}
		}
		if len(ok) > 0 {
			if rsName == resModifyNotifRS {
				rs.Mods = &modifiesOut{List: ok}
			} else {
				rs.Res = &reservationsOut{List: ok}
			}
		}
	}
	b, merr := envelope("", "", rs)
	if merr != nil {
		return "text/plain; charset=utf-8", []byte(merr.Error()), http.StatusInternalServerError
	}
	return contentType, b, status
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
