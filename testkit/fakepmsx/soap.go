package fakepmsx

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Namespaces of the messages (docs/channels.md, OpenTravel (pmsXchange)).
const (
	NSSOAP     = "http://schemas.xmlsoap.org/soap/envelope/"
	NSWSSE     = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	NSOTA      = "http://www.opentravel.org/OTA/2003/05"
	PasswordTx = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText"
)

// envelope is a SOAP 1.1 envelope as read: the UsernameToken and the body's element.
type envelope struct {
	XMLName xml.Name `xml:"http://schemas.xmlsoap.org/soap/envelope/ Envelope"`
	Header  struct {
		Security *struct {
			UsernameToken *struct {
				Username string `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Username"`
				Password struct {
					Type  string `xml:"Type,attr"`
					Value string `xml:",chardata"`
				} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Password"`
			} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd UsernameToken"`
		} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Security"`
	} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Header"`
	Body struct {
		Inner []byte `xml:",innerxml"`
	} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Body"`
}

// readEnvelope reads a SOAP envelope: its credentials (ok false when it carries none), the
// body's message element name and its bytes.
func readEnvelope(b []byte) (user, pass, passType string, hasToken bool, root xml.Name, payload []byte, err error) {
	var env envelope
	if err = xml.Unmarshal(b, &env); err != nil {
		return "", "", "", false, xml.Name{}, nil, fmt.Errorf("not a SOAP 1.1 envelope: %v", err)
	}
	if s := env.Header.Security; s != nil && s.UsernameToken != nil {
		hasToken = true
		user, pass, passType = s.UsernameToken.Username, s.UsernameToken.Password.Value, s.UsernameToken.Password.Type
	}
	payload = bytes.TrimSpace(env.Body.Inner)
	d := xml.NewDecoder(bytes.NewReader(payload))
	for {
		t, terr := d.Token()
		if terr != nil {
			return user, pass, passType, hasToken, root, payload, errors.New("the SOAP Body holds no message")
		}
		if se, ok := t.(xml.StartElement); ok {
			root = se.Name
			return user, pass, passType, hasToken, root, payload, nil
		}
	}
}

// Envelope wraps an OTA message in a SOAP 1.1 envelope, with a WS-Security UsernameToken
// when user is not empty (requests), or an empty Header (answers), as pmsXchange's Message
// Structure page shows.
func Envelope(user, pass string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<SOAP-ENV:Envelope xmlns:SOAP-ENV="` + NSSOAP + `">`)
	if user == "" {
		b.WriteString(`<SOAP-ENV:Header/>`)
	} else {
		b.WriteString(`<SOAP-ENV:Header><wsse:Security SOAP-ENV:mustUnderstand="1" xmlns:wsse="` + NSWSSE + `">`)
		b.WriteString(`<wsse:UsernameToken><wsse:Username>` + esc(user) + `</wsse:Username>`)
		b.WriteString(`<wsse:Password Type="` + PasswordTx + `">` + esc(pass) + `</wsse:Password>`)
		b.WriteString(`</wsse:UsernameToken></wsse:Security></SOAP-ENV:Header>`)
	}
	b.WriteString(`<SOAP-ENV:Body>`)
	b.Write(payload)
	b.WriteString(`</SOAP-ENV:Body></SOAP-ENV:Envelope>`)
	return b.Bytes()
}

func soapFault(code, text string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<SOAP-ENV:Envelope xmlns:SOAP-ENV="` + NSSOAP + `"><SOAP-ENV:Body><SOAP-ENV:Fault>` +
		`<faultcode>SOAP-ENV:` + code + `</faultcode><faultstring>` + esc(text) + `</faultstring>` +
		`</SOAP-ENV:Fault></SOAP-ENV:Body></SOAP-ENV:Envelope>`)
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func attr(name, value string) string {
	if value == "" {
		return ""
	}
	return " " + name + `="` + esc(value) + `"`
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// OTAError is one Error or Warning of an RS.
type OTAError struct {
	Type     string `xml:"Type,attr"`
	Code     string `xml:"Code,attr"`
	RecordID string `xml:"RecordID,attr"`
	Text     string `xml:",chardata"`
}

// rs is an RS message: Success with warnings, or Errors.
func rs(root, echo string, errs []OTAError, inner string) []byte {
	var b strings.Builder
	b.WriteString(`<` + root + ` xmlns="` + NSOTA + `"` + attr("EchoToken", echo) +
		attr("TimeStamp", stamp(time.Now())) + ` Version="1.0">`)
	if len(errs) == 0 {
		b.WriteString(`<Success/>`)
		b.WriteString(inner)
	} else {
		b.WriteString(`<Errors>`)
		for _, e := range errs {
			b.WriteString(`<Error` + attr("Type", e.Type) + attr("Code", e.Code) + attr("RecordID", e.RecordID) + `>` + esc(e.Text) + `</Error>`)
		}
		b.WriteString(`</Errors>`)
	}
	b.WriteString(`</` + root + `>`)
	return []byte(b.String())
}
