package opentravel

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"time"
)

// Namespaces and fixed values of the messages (docs/channels.md, OpenTravel (pmsXchange)).
const (
	nsSOAP       = "http://schemas.xmlsoap.org/soap/envelope/"
	nsWSSE       = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsOTA        = "http://www.opentravel.org/OTA/2003/05"
	passwordText = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText"
	version      = "1.0" // pmsXchange: "Must be set to 1.0"
	requestorESR = "22"  // POS/Source/RequestorID@Type: ERSP, fixed by pmsXchange
	contentType  = "text/xml; charset=utf-8"
)

// --- the SOAP 1.1 envelope, as written ---

type envelopeOut struct {
	XMLName xml.Name   `xml:"SOAP-ENV:Envelope"`
	NS      string     `xml:"xmlns:SOAP-ENV,attr"`
	Header  *headerOut `xml:"SOAP-ENV:Header"`
	Body    struct {
		Content any
	} `xml:"SOAP-ENV:Body"`
}

type headerOut struct {
	Security *securityOut `xml:"wsse:Security,omitempty"`
}

type securityOut struct {
	NS             string `xml:"xmlns:wsse,attr"`
	MustUnderstand string `xml:"SOAP-ENV:mustUnderstand,attr"`
	Username       string `xml:"wsse:UsernameToken>wsse:Username"`
	Password       struct {
		Type  string `xml:"Type,attr"`
		Value string `xml:",chardata"`
	} `xml:"wsse:UsernameToken>wsse:Password"`
}

// envelope wraps an OTA message: with the WS-Security UsernameToken of user and pass
// (requests), or with an empty Header (answers, as pmsXchange's Message Structure asks).
func envelope(user, pass string, content any) ([]byte, error) {
	e := envelopeOut{NS: nsSOAP, Header: &headerOut{}}
	if user != "" || pass != "" {
		s := &securityOut{NS: nsWSSE, MustUnderstand: "1", Username: user}
		s.Password.Type, s.Password.Value = passwordText, pass
		e.Header.Security = s
	}
	e.Body.Content = content
	b, err := xml.Marshal(e)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}

// --- ARI out ---

type pos struct {
	Requestor struct {
		Type string `xml:"Type,attr"`
		ID   string `xml:"ID,attr"`
	} `xml:"Source>RequestorID"`
}

func newPOS(id string) *pos {
	p := &pos{}
	p.Requestor.Type, p.Requestor.ID = requestorESR, id
	return p
}

type payloadAttrs struct {
	EchoToken string `xml:"EchoToken,attr,omitempty"`
	TimeStamp string `xml:"TimeStamp,attr"`
	Version   string `xml:"Version,attr"`
}

type availNotifRQ struct {
	XMLName xml.Name `xml:"http://www.opentravel.org/OTA/2003/05 OTA_HotelAvailNotifRQ"`
	payloadAttrs
	POS      *pos                 `xml:"POS"`
	Messages *availStatusMessages `xml:"AvailStatusMessages,omitempty"`
}

type availStatusMessages struct {
	HotelCode string               `xml:"HotelCode,attr"`
	Message   []availStatusMessage `xml:"AvailStatusMessage"`
}

type statusApplicationControl struct {
	Start        string `xml:"Start,attr,omitempty"`
	End          string `xml:"End,attr,omitempty"`
	InvTypeCode  string `xml:"InvTypeCode,attr,omitempty"`
	RatePlanCode string `xml:"RatePlanCode,attr,omitempty"`
}

type availStatusMessage struct {
	BookingLimit *int                     `xml:"BookingLimit,attr,omitempty"`
	SAC          statusApplicationControl `xml:"StatusApplicationControl"`
	LOS          []lengthOfStay           `xml:"LengthsOfStay>LengthOfStay,omitempty"`
	Restriction  *restrictionStatus       `xml:"RestrictionStatus,omitempty"`
}

type lengthOfStay struct {
	MinMaxMessageType string `xml:"MinMaxMessageType,attr"`
	Time              string `xml:"Time,attr,omitempty"`
	TimeUnit          string `xml:"TimeUnit,attr,omitempty"`
}

type restrictionStatus struct {
	Restriction string `xml:"Restriction,attr"`
	Status      string `xml:"Status,attr"`
}

type rateAmountNotifRQ struct {
	XMLName xml.Name `xml:"http://www.opentravel.org/OTA/2003/05 OTA_HotelRateAmountNotifRQ"`
	payloadAttrs
	POS      *pos `xml:"POS"`
	Messages struct {
		HotelCode string              `xml:"HotelCode,attr"`
		Message   []rateAmountMessage `xml:"RateAmountMessage"`
	} `xml:"RateAmountMessages"`
}

type rateAmountMessage struct {
	SAC   statusApplicationControl `xml:"StatusApplicationControl"`
	Rates []rateOut                `xml:"Rates>Rate"`
}

type rateOut struct {
	CurrencyCode string `xml:"CurrencyCode,attr"`
	Start        string `xml:"Start,attr"`
	End          string `xml:"End,attr"`
	Amount       struct {
		AmountAfterTax string `xml:"AmountAfterTax,attr"`
		CurrencyCode   string `xml:"CurrencyCode,attr"`
	} `xml:"BaseByGuestAmts>BaseByGuestAmt"`
}

// --- answers, as read ---

// envelopeIn is a SOAP 1.1 envelope as read: its UsernameToken and its Body's content.
type envelopeIn struct {
	XMLName xml.Name
	Header  *struct {
		Security *struct {
			UsernameToken *struct {
				Username string `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Username"`
				Password *struct {
					Type  string `xml:"Type,attr"`
					Value string `xml:",chardata"`
				} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Password"`
			} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd UsernameToken"`
		} `xml:"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd Security"`
	} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Header"`
	Body *struct {
		Inner []byte `xml:",innerxml"`
	} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Body"`
}

// soapFault is a Body's Fault.
type soapFault struct {
	XMLName xml.Name `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault"`
	Code    string   `xml:"faultcode"`
	String  string   `xml:"faultstring"`
}

type otaError struct {
	Type      string `xml:"Type,attr,omitempty"`
	Code      string `xml:"Code,attr,omitempty"`
	ShortText string `xml:"ShortText,attr,omitempty"`
	RecordID  string `xml:"RecordID,attr,omitempty"`
	Text      string `xml:",chardata"`
}

// rsIn is any RS: Success, Warnings, Errors.
type rsIn struct {
	XMLName  xml.Name
	Success  *struct{}  `xml:"Success"`
	Warnings []otaError `xml:"Warnings>Warning"`
	Errors   []otaError `xml:"Errors>Error"`
}

// decodeBody reads a SOAP 1.1 envelope whose Body holds exactly one element, decoding that
// element into pick(its name) (nil: skipped). The names keep the namespaces declared on the
// envelope.
func decodeBody(b []byte, pick func(name xml.Name) any) (xml.Name, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var name xml.Name
	depth, count, inBody, sawBody := 0, 0, false, false
	for {
		t, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return name, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				if t.Name.Space != nsSOAP || t.Name.Local != "Envelope" {
					return name, errNotEnvelope
				}
			case depth == 2:
				if t.Name.Space != nsSOAP || (t.Name.Local != "Header" && t.Name.Local != "Body") {
					return name, errNotEnvelope
				}
				if t.Name.Local == "Header" {
					if err := d.Skip(); err != nil {
						return name, err
					}
					depth--
					continue
				}
				inBody, sawBody = true, true
			case depth == 3 && inBody:
				count++
				if count > 1 {
					return name, errBodyCount
				}
				name = t.Name
				var v any
				if pick != nil {
					v = pick(t.Name)
				}
				var err error
				if v == nil {
					err = d.Skip()
				} else {
					err = d.DecodeElement(v, &t)
				}
				if err != nil {
					return name, err
				}
				depth--
			}
		case xml.EndElement:
			if depth == 2 {
				inBody = false
			}
			depth--
		case xml.CharData:
			if inBody && depth == 2 && len(bytes.TrimSpace(t)) > 0 {
				return name, errBodyText
			}
		}
	}
	if !sawBody {
		return name, errNotEnvelope
	}
	if count != 1 {
		return name, errBodyCount
	}
	return name, nil
}

type bodyError string

func (e bodyError) Error() string { return string(e) }

const (
	errNotEnvelope = bodyError("not a SOAP 1.1 envelope with a Body")
	errBodyText    = bodyError("the SOAP Body holds text")
	errBodyCount   = bodyError("the SOAP Body must hold exactly one message")
)

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// --- masking, for the log ---

var (
	maskPassword = regexp.MustCompile(`(?s)(<(?:[\w.-]+:)?Password\b[^>]*>)(.*?)(</(?:[\w.-]+:)?Password>)`)
	maskCard     = regexp.MustCompile(`(?s)(<(?:[\w.-]+:)?(?:CardNumber|SeriesCode|MagneticStripe)\b[^>]*>)(.*?)(</(?:[\w.-]+:)?(?:CardNumber|SeriesCode|MagneticStripe)>)`)
	maskCardAttr = regexp.MustCompile(`\b(CardNumber|SeriesCode|EncryptedValue)="[^"]*"`)
	digits       = regexp.MustCompile(`[0-9]`)
)

// Mask is b with the WS-Security password and card data (card numbers, CVCs, magnetic
// stripes) masked: the copy of a message that may be logged.
func Mask(b []byte) []byte {
	b = maskPassword.ReplaceAll(b, []byte("${1}***${3}"))
	b = maskCard.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := maskCard.FindSubmatch(m)
		inner := digits.ReplaceAll(sub[2], []byte("*"))
		return append(append(append([]byte{}, sub[1]...), inner...), sub[3]...)
	})
	return maskCardAttr.ReplaceAll(b, []byte(`$1="***"`))
}
