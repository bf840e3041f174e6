package phpform

import (
	"encoding/json"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"flat", "key=k1&pass=p%26q&action=getinfo&propertyId=21", `{"action":"getinfo","key":"k1","pass":"p\u0026q","propertyId":"21"}`},
		{"plus is space", "firstName=Ann+Lee", `{"firstName":"Ann Lee"}`},
		{"indexed list of objects", "service[0][name]=Cleaning&service[0][amount]=50&service[1][name]=Linen",
			`{"service":[{"amount":"50","name":"Cleaning"},{"name":"Linen"}]}`},
		{"appended list", "include[]=wifi&include[]=pool", `{"include":["wifi","pool"]}`},
		{"nested taxes", "service[0][taxes][0][name]=VAT&service[0][taxes][0][perc]=10",
			`{"service":[{"taxes":[{"name":"VAT","perc":"10"}]}]}`},
		{"sparse indices stay an object", "a[0]=x&a[2]=y", `{"a":{"0":"x","2":"y"}}`},
		{"named keys", "creditCard[CCNumber]=4242&creditCard[CVC]=123", `{"creditCard":{"CCNumber":"4242","CVC":"123"}}`},
		{"empty value", "service=", `{"service":""}`},
		{"empty body", "", `{}`},
	}
	for _, c := range cases {
		got, err := Parse(c.body)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, b, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, body := range []string{
		"[x]=1",                       // no name
		"a[b=1",                       // unclosed bracket
		"a[b]c=1",                     // text after bracket
		"a=1&a[b]=2",                  // value then object
		"a[b]=1&a=2",                  // object then value
		"a%zz=1",                      // bad escape
		"a[1][2][3][4][5][6][7][8]=1", // too deep
	} {
		if _, err := Parse(body); err == nil {
			t.Errorf("Parse(%q) succeeded", body)
		}
	}
}
