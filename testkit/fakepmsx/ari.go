package fakepmsx

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"time"
)

type statusApplicationControl struct {
	Start        string `xml:"Start,attr"`
	End          string `xml:"End,attr"`
	InvTypeCode  string `xml:"InvTypeCode,attr"`
	RatePlanCode string `xml:"RatePlanCode,attr"`
	Mon          string `xml:"Mon,attr"`
	Tue          string `xml:"Tue,attr"`
	Weds         string `xml:"Weds,attr"`
	Thur         string `xml:"Thur,attr"`
	Fri          string `xml:"Fri,attr"`
	Sat          string `xml:"Sat,attr"`
	Sun          string `xml:"Sun,attr"`
}

type availNotif struct {
	XMLName   xml.Name `xml:"http://www.opentravel.org/OTA/2003/05 OTA_HotelAvailNotifRQ"`
	EchoToken string   `xml:"EchoToken,attr"`
	TimeStamp string   `xml:"TimeStamp,attr"`
	Version   string   `xml:"Version,attr"`
	Requestor *struct {
		Type string `xml:"Type,attr"`
		ID   string `xml:"ID,attr"`
	} `xml:"POS>Source>RequestorID"`
	Messages *struct {
		HotelCode string `xml:"HotelCode,attr"`
		Message   []struct {
			BookingLimit *int                      `xml:"BookingLimit,attr"`
			SAC          *statusApplicationControl `xml:"StatusApplicationControl"`
			LOS          []struct {
				Type     string `xml:"MinMaxMessageType,attr"`
				Time     string `xml:"Time,attr"`
				TimeUnit string `xml:"TimeUnit,attr"`
			} `xml:"LengthsOfStay>LengthOfStay"`
			Restriction *struct {
				Restriction string `xml:"Restriction,attr"`
				Status      string `xml:"Status,attr"`
			} `xml:"RestrictionStatus"`
		} `xml:"AvailStatusMessage"`
	} `xml:"AvailStatusMessages"`
}

type rateNotif struct {
	XMLName   xml.Name `xml:"http://www.opentravel.org/OTA/2003/05 OTA_HotelRateAmountNotifRQ"`
	EchoToken string   `xml:"EchoToken,attr"`
	TimeStamp string   `xml:"TimeStamp,attr"`
	Requestor *struct {
		Type string `xml:"Type,attr"`
		ID   string `xml:"ID,attr"`
	} `xml:"POS>Source>RequestorID"`
	Messages *struct {
		HotelCode string `xml:"HotelCode,attr"`
		Message   []struct {
			SAC   *statusApplicationControl `xml:"StatusApplicationControl"`
			Rates []struct {
				CurrencyCode string `xml:"CurrencyCode,attr"`
				Start        string `xml:"Start,attr"`
				End          string `xml:"End,attr"`
				Amounts      []struct {
					AmountAfterTax string `xml:"AmountAfterTax,attr"`
					CurrencyCode   string `xml:"CurrencyCode,attr"`
				} `xml:"BaseByGuestAmts>BaseByGuestAmt"`
			} `xml:"Rates>Rate"`
		} `xml:"RateAmountMessage"`
	} `xml:"RateAmountMessages"`
}

// days lists the dates of a StatusApplicationControl (or a Rate's) Start..End, both
// included, keeping those its weekday pattern allows (no pattern: every day).
func days(start, end string, sac *statusApplicationControl) ([]string, error) {
	s, err := time.Parse(time.DateOnly, start)
	if err != nil {
		return nil, fmt.Errorf("the Start %q is not a date", start)
	}
	e, err := time.Parse(time.DateOnly, end)
	if err != nil {
		return nil, fmt.Errorf("the End %q is not a date", end)
	}
	if e.Before(s) {
		return nil, fmt.Errorf("the End %s is before the Start %s", end, start)
	}
	if e.Sub(s) > 1000*24*time.Hour {
		return nil, fmt.Errorf("the range %s..%s is too long", start, end)
	}
	var pattern []string
	if sac != nil {
		pattern = []string{sac.Sun, sac.Mon, sac.Tue, sac.Weds, sac.Thur, sac.Fri, sac.Sat}
	}
	any := false
	for _, p := range pattern {
		any = any || p != ""
	}
	var out []string
	for d := s; !d.After(e); d = d.AddDate(0, 0, 1) {
		if any {
			v, _ := strconv.ParseBool(pattern[d.Weekday()])
			if !v {
				continue
			}
		}
		out = append(out, d.Format(time.DateOnly))
	}
	return out, nil
}

// Value is one value a date received, with the sequence number of the message that set it
// (increasing with each accepted message), so that a test can check that no older value
// arrived after a newer one.
type Value struct {
	Seq   int
	Value string
}

// Day is the state of one room type's date (availability) or one rate plan's date (the
// rest): the last value received for each field, empty when none was.
type Day struct {
	Availability string // BookingLimit
	Rate         string // AmountAfterTax
	Currency     string
	MinLOS       string // SetMinLOS Time ("" after RemoveMinLOS)
	MinStay      string // SetForwardMinStay Time (the minimum stay through)
	MaxLOS       string // SetMaxLOS Time ("" after RemoveMaxLOS)
	Master       string // Open | Close
	Arrival      string // Open | Close
	Departure    string // Open | Close
}

// key of a date's state: hotel, room type, rate plan ("" for the room type's availability).
type key struct {
	hotel, room, plan, date string
}

type field int

const (
	fAvailability field = iota
	fRate
	fCurrency
	fMinLOS
	fMinStay
	fMaxLOS
	fMaster
	fArrival
	fDeparture
)

var fieldNames = [...]string{"Availability", "Rate", "Currency", "MinLOS", "MinStay", "MaxLOS", "Master", "Arrival", "Departure"}

func (d *Day) set(f field, v string) {
	switch f {
	case fAvailability:
		d.Availability = v
	case fRate:
		d.Rate = v
	case fCurrency:
		d.Currency = v
	case fMinLOS:
		d.MinLOS = v
	case fMinStay:
		d.MinStay = v
	case fMaxLOS:
		d.MaxLOS = v
	case fMaster:
		d.Master = v
	case fArrival:
		d.Arrival = v
	case fDeparture:
		d.Departure = v
	}
}

// change is one field of one date set by a message.
type change struct {
	k key
	f field
	v string
}

// readAvail checks an OTA_HotelAvailNotifRQ beyond its schema, as pmsXchange documents it,
// and returns its changes; kind is "availability" or "restrictions" (pmsXchange requires
// them in separate requests) or "test" (no AvailStatusMessages).
func readAvail(b []byte) (kind, echo string, changes []change, err error) {
	var m availNotif
	if err := xml.Unmarshal(b, &m); err != nil {
		return "", "", nil, err
	}
	echo = m.EchoToken
	if m.EchoToken == "" || m.TimeStamp == "" {
		return "", echo, nil, fmt.Errorf("the EchoToken and TimeStamp are required")
	}
	if m.Version != "1.0" {
		return "", echo, nil, fmt.Errorf("the Version must be 1.0")
	}
	if m.Requestor == nil || m.Requestor.Type != "22" || m.Requestor.ID == "" {
		return "", echo, nil, fmt.Errorf("POS/Source/RequestorID with Type 22 and the PMS code is required")
	}
	if m.Messages == nil {
		return "test", echo, nil, nil
	}
	if m.Messages.HotelCode == "" {
		return "", echo, nil, fmt.Errorf("AvailStatusMessages/@HotelCode is required")
	}
	avail, restr := false, false
	for i, msg := range m.Messages.Message {
		if msg.SAC == nil || msg.SAC.InvTypeCode == "" {
			return "", echo, nil, fmt.Errorf("AvailStatusMessage %d: StatusApplicationControl/@InvTypeCode is required", i+1)
		}
		ds, err := days(msg.SAC.Start, msg.SAC.End, msg.SAC)
		if err != nil {
			return "", echo, nil, fmt.Errorf("AvailStatusMessage %d: %v", i+1, err)
		}
		h, room, plan := m.Messages.HotelCode, msg.SAC.InvTypeCode, msg.SAC.RatePlanCode
		var cs []change
		add := func(f field, v string) {
			k := key{h, room, plan, ""}
			if f == fAvailability {
				k.plan = ""
			}
			for _, d := range ds {
				k.date = d
				cs = append(cs, change{k, f, v})
			}
		}
		if msg.BookingLimit != nil {
			avail = true
			if msg.SAC.RatePlanCode != "" {
				return "", echo, nil, fmt.Errorf("AvailStatusMessage %d: availability is set per room type (InvTypeCode), without a RatePlanCode", i+1)
			}
			add(fAvailability, strconv.Itoa(*msg.BookingLimit))
		}
		if msg.Restriction != nil || len(msg.LOS) > 0 {
			restr = true
			if plan == "" {
				return "", echo, nil, fmt.Errorf("AvailStatusMessage %d: restrictions need a RatePlanCode", i+1)
			}
		}
		if r := msg.Restriction; r != nil {
			if r.Status != "Open" && r.Status != "Close" {
				return "", echo, nil, fmt.Errorf("AvailStatusMessage %d: RestrictionStatus/@Status must be Open or Close", i+1)
			}
			switch r.Restriction {
			case "", "Master":
				add(fMaster, r.Status)
			case "Arrival":
				add(fArrival, r.Status)
			case "Departure":
				add(fDeparture, r.Status)
			default:
				return "", echo, nil, fmt.Errorf("AvailStatusMessage %d: Restriction %q is not supported", i+1, r.Restriction)
			}
		}
		for _, l := range msg.LOS {
			set := func(f field) error {
				n, err := strconv.Atoi(l.Time)
				if err != nil || n < 1 || l.TimeUnit != "Day" {
					return fmt.Errorf("AvailStatusMessage %d: %s needs a Time ≥ 1 with TimeUnit Day", i+1, l.Type)
				}
				add(f, l.Time)
				return nil
			}
			var err error
			switch l.Type {
			case "SetMinLOS":
				err = set(fMinLOS)
			case "SetForwardMinStay":
				err = set(fMinStay)
			case "SetMaxLOS":
				err = set(fMaxLOS)
			case "RemoveMinLOS":
				add(fMinLOS, "")
			case "RemoveForwardMinStay":
				add(fMinStay, "")
			case "RemoveMaxLOS":
				add(fMaxLOS, "")
			default:
				err = fmt.Errorf("AvailStatusMessage %d: MinMaxMessageType %q is not supported", i+1, l.Type)
			}
			if err != nil {
				return "", echo, nil, err
			}
		}
		if msg.BookingLimit == nil && msg.Restriction == nil && len(msg.LOS) == 0 {
			return "", echo, nil, fmt.Errorf("AvailStatusMessage %d sets nothing", i+1)
		}
		changes = append(changes, cs...)
	}
	if avail && restr {
		return "", echo, nil, fmt.Errorf("availability and restrictions must be sent in separate requests")
	}
	if avail {
		return "availability", echo, changes, nil
	}
	return "restrictions", echo, changes, nil
}

// readRates checks an OTA_HotelRateAmountNotifRQ as pmsXchange documents it.
func readRates(b []byte) (echo string, changes []change, err error) {
	var m rateNotif
	if err := xml.Unmarshal(b, &m); err != nil {
		return "", nil, err
	}
	echo = m.EchoToken
	if m.EchoToken == "" || m.TimeStamp == "" {
		return echo, nil, fmt.Errorf("the EchoToken and TimeStamp are required")
	}
	if m.Requestor == nil || m.Requestor.Type != "22" || m.Requestor.ID == "" {
		return echo, nil, fmt.Errorf("POS/Source/RequestorID with Type 22 and the PMS code is required")
	}
	if m.Messages == nil || m.Messages.HotelCode == "" {
		return echo, nil, fmt.Errorf("RateAmountMessages with a HotelCode is required")
	}
	for i, msg := range m.Messages.Message {
		if msg.SAC == nil || msg.SAC.InvTypeCode == "" || msg.SAC.RatePlanCode == "" {
			return echo, nil, fmt.Errorf("RateAmountMessage %d: StatusApplicationControl/@InvTypeCode and @RatePlanCode are required", i+1)
		}
		if len(msg.Rates) == 0 {
			return echo, nil, fmt.Errorf("RateAmountMessage %d: no Rate", i+1)
		}
		for _, r := range msg.Rates {
			if r.CurrencyCode == "" {
				return echo, nil, fmt.Errorf("RateAmountMessage %d: Rate/@CurrencyCode is required", i+1)
			}
			if len(r.Amounts) != 1 || r.Amounts[0].AmountAfterTax == "" {
				return echo, nil, fmt.Errorf("RateAmountMessage %d: one BaseByGuestAmt with AmountAfterTax is required", i+1)
			}
			if _, err := strconv.ParseFloat(r.Amounts[0].AmountAfterTax, 64); err != nil {
				return echo, nil, fmt.Errorf("RateAmountMessage %d: AmountAfterTax %q", i+1, r.Amounts[0].AmountAfterTax)
			}
			start, end := r.Start, r.End
			if start == "" && end == "" {
				start, end = msg.SAC.Start, msg.SAC.End
			} else if (msg.SAC.Start != "" || msg.SAC.End != "") && (msg.SAC.Start != start || msg.SAC.End != end) {
				return echo, nil, fmt.Errorf("RateAmountMessage %d: the StatusApplicationControl's dates are not the Rate's", i+1)
			}
			ds, err := days(start, end, msg.SAC)
			if err != nil {
				return echo, nil, fmt.Errorf("RateAmountMessage %d: %v", i+1, err)
			}
			for _, d := range ds {
				k := key{m.Messages.HotelCode, msg.SAC.InvTypeCode, msg.SAC.RatePlanCode, d}
				changes = append(changes, change{k, fRate, r.Amounts[0].AmountAfterTax}, change{k, fCurrency, r.CurrencyCode})
			}
		}
	}
	return echo, changes, nil
}
