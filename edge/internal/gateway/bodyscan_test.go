package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/vros/vros/libs/httpapi"
)

// TestBodyCredentials: the credentials edge reads from a body before anything else are those
// the body gives once parsed (BodyJSON, then encoding/json as interface B reads its
// envelope), in every format; a body that carries none gives none (interface A) or is
// refused as the parsed body would be (interface B); a malformed form is refused naming
// the key; a credential too long to be one is wrong without being read.
func TestBodyCredentials(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	mp := func(fields ...string) (string, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			_ = w.WriteField(fields[i], fields[i+1])
		}
		_ = w.Close()
		return w.FormDataContentType(), b.String()
	}
	mpCT, mpBody := mp("action", "getinfo", "key", "k1", "service[0][name]", "x", "pass", "p1")
	mpNestedCT, mpNested := mp("key[]", "k1", "pass", "p1")
	mpCaseCT, mpCase := mp("key", "k0", "\u212aey", "k1", "pass", "p1", "KEY", "k2")
	long := strings.Repeat("x", maxCredential+1)
	for _, c := range []struct {
		name, ct, body string
		want           [2]string
		err            string    // a refusal of interface B's (strict) reading
		errA           string    // of interface A's; "" with err set: wantA
		wantA          [2]string // interface A's credentials where B refuses the body
	}{
		{name: "JSON", ct: "application/json", body: `{"action":"x","key":"k1","pass":"p1"}`, want: [2]string{"k1", "p1"}},
		{name: "JSON, nested members skipped", ct: "application/json",
			body: `{"a":{"key":"no","b":[{"pass":"no"},"]}"]},"key":"k1","c":[[[]]],"pass":"p1","d":"}"}`, want: [2]string{"k1", "p1"}},
		{name: "JSON, last member wins", body: `{"key":"k0","pass":"p1","key":"k1"}`, want: [2]string{"k1", "p1"}},
		{name: "JSON, names as encoding/json matches them", body: `{"KEY":"k1","P\u0061ss":"p1"}`, want: [2]string{"k1", "p1"}},
		{name: "JSON, escaped values", body: `{"key":"k\u0031","pass":"p\"1"}`, want: [2]string{"k1", `p"1`}},
		{name: "JSON sent as a form", ct: form, body: ` {"key":"k1","pass":"p1"}`, want: [2]string{"k1", "p1"}},
		{name: "JSON, null", body: `{"key":null,"pass":"p1"}`, want: [2]string{"", "p1"}},
		{name: "JSON, a number", body: `{"key":1,"pass":"p1"}`, err: "key must be a string", wantA: [2]string{"", "p1"}},
		{name: "JSON, a list", body: `[{"key":"k1","pass":"p1"}]`, err: "not a JSON object"},
		{name: "JSON, malformed", body: `{"key":"k1","pass":"p1"`, err: "not a JSON object"},
		{name: "JSON, deeper than encoding/json reads", body: `{"key":"k1","pass":"p1","a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
			err: "not a JSON object"},
		{name: "form", ct: form, body: "action=x&key=k1&service[0][name]=y&pass=p%261", want: [2]string{"k1", "p&1"}},
		{name: "form, escaped names", ct: form + "; charset=UTF-8", body: "%6Bey=k1&pass=p+1", want: [2]string{"k1", "p 1"}},
		{name: "form, last value wins", ct: form, body: "key=k0&pass=p1&key=k1", want: [2]string{"k1", "p1"}},
		{name: "form, names as encoding/json matches them", ct: form, body: "KEY=k1&pass=p1", want: [2]string{"k1", "p1"}},
		// BodyJSON's object has its keys in byte order, and encoding/json takes the last match.
		{name: "form, the greatest matching name wins", ct: form, body: "key=k1&KEY=k0&pass=p1&KEY=k2", want: [2]string{"k1", "p1"}},
		{name: "form, the Kelvin sign sorts after k", ct: form, body: "key=k0&%E2%84%AAey=k1&pass=p1", want: [2]string{"k1", "p1"}},
		{name: "form, a long value under a name that loses", ct: form, body: "KEY=" + long + "&key=k1&pass=p1", want: [2]string{"k1", "p1"}},
		{name: "form, a list under any matching name", ct: form, body: "KEY[]=k0&key=k1&pass=p1", err: "key must be a string", wantA: [2]string{"", "p1"}},
		{name: "form, a list and a value under one name", ct: form, body: "KEY[]=k0&KEY=k1&pass=p1", err: "key must be a string", wantA: [2]string{"", "p1"}},
		{name: "form, key as a list", ct: form, body: "key[]=k1&pass=p1", err: "key must be a string", wantA: [2]string{"", "p1"}},
		{name: "form, malformed key", ct: form, body: "key=k1&pass=p1&service[0]name=x", err: `form key "service[0]name" has text after a bracket`,
			errA: `form key "service[0]name"`},
		{name: "form, over MaxPairs", ct: form, body: "key=k1&pass=p1" + strings.Repeat("&a=", 10000), err: "more than 10000 fields", errA: "more than 10000 fields"},
		{name: "form, bad escape in a credential", ct: form, body: "key=k%zz&pass=p1", err: `form value of "key"`, errA: `form value of "servicekey"`},
		{name: "multipart", ct: mpCT, body: mpBody, want: [2]string{"k1", "p1"}},
		{name: "multipart, names as encoding/json matches them", ct: mpCaseCT, body: mpCase, want: [2]string{"k1", "p1"}},
		{name: "multipart, key as a list", ct: mpNestedCT, body: mpNested, err: "key must be a string", wantA: [2]string{"", "p1"}},
		{name: "multipart, cut short", ct: mpCT, body: mpBody[:len(mpBody)/2], err: "multipart/form-data", errA: "multipart/form-data"},
		{name: "text", ct: "text/plain", body: "key=k1&pass=p1", err: "not a JSON object"},
		{name: "JSON, credential too long", body: `{"key":"` + long + `","pass":"p1"}`, err: errCredentialTooLong.Error(), errA: errCredentialTooLong.Error()},
		{name: "form, credential too long", ct: form, body: "key=k1&pass=" + long, err: errCredentialTooLong.Error(), errA: errCredentialTooLong.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := bodyCredentials(c.ct, []byte(c.body), namesB, true)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v; want a refusal with %q", got, err, c.err)
				}
				if !errors.Is(err, errCredentialTooLong) {
					var e *httpapi.Error
					if !errors.As(err, &e) || e.HTTP != http.StatusBadRequest {
						t.Fatalf("%v is not a 400", err)
					}
				}
			} else if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
			// Interface A reads servicekey/servicepass the same way, without refusing a body
			// that carries none.
			renamed := strings.NewReplacer("key", "servicekey", "pass", "servicepass", "KEY", "SERVICEKEY", "P\\u0061ss", "SERVICEP\\u0061ss",
				"%6Bey", "servic%65key", "%E2%84%AAey", "service%E2%84%AAey", "\u212aey", "service\u212aey").Replace(c.body)
			gotA, errA := bodyCredentials(c.ct, []byte(renamed), namesA, false)
			switch {
			case c.errA != "":
				if errA == nil || !strings.Contains(errA.Error(), c.errA) {
					t.Fatalf("interface A: got %q, %v; want a refusal with %q", gotA, errA, c.errA)
				}
			case c.err != "":
				if errA != nil || gotA != c.wantA {
					t.Fatalf("interface A: got %q, %v; want %q", gotA, errA, c.wantA)
				}
			default:
				if errA != nil || gotA != c.want {
					t.Fatalf("interface A: got %q, %v; want %q", gotA, errA, c.want)
				}
			}
			// What the body gives once parsed.
			if c.err != "" {
				return
			}
			js, err := BodyJSON(c.ct, []byte(c.body), MaxBody)
			if err != nil {
				t.Fatal(err)
			}
			var env bEnvelope
			if err := json.Unmarshal(js, &env); err != nil || [2]string{env.Key, env.Pass} != got {
				t.Fatalf("the parsed body gives %q %q (%v), the scan %q", env.Key, env.Pass, err, got)
			}
		})
	}
}

// TestBodyCredentialsAllocations: reading the credentials of a hostile body allocates a small,
// fixed amount whatever the body's size (here 4 MiB, over every route's own limit, which a
// caller not yet authenticated may send up to MaxBody): nothing is built of it. (JSON nested
// past encoding/json's 10 000 levels costs json.Valid's stack of them, some 350 KB.)
func TestBodyCredentialsAllocations(t *testing.T) {
	const size = 4 << 20
	fill := func(prefix, unit, suffix string) []byte {
		return []byte(prefix + strings.Repeat(unit, (size-len(prefix)-len(suffix))/len(unit)) + suffix)
	}
	const boundary = "b"
	part := "--b\r\nContent-Disposition: form-data; name=\"a[][][][][][][]\"\r\n\r\nx\r\n"
	for _, c := range []struct {
		name, ct string
		body     []byte
		budget   uint64 // bytes allocated, at most
	}{
		{"nested form", "application/x-www-form-urlencoded", fill("key=k&pass=p&", "a[][][][][][][]=&", ""), 1 << 20},
		{"flat pairs", "application/x-www-form-urlencoded", fill("key=k&pass=p&", "a=&", ""), 1 << 20},
		{"deep JSON", "application/json", fill(`{"key":"k","pass":"p","a":`, "[", ""), 1 << 20},
		{"wide JSON", "application/json", fill(`{"key":"k","pass":"p","a":[`, `{"b":[0]},`, `0]}`), 1 << 20},
		{"many multipart parts", "multipart/form-data; boundary=" + boundary, fill("", part, "--b--\r\n"), 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := bodyCredentials(c.ct, c.body, namesB, true)
			runtime.ReadMemStats(&after)
			got := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes allocated reading a %d-byte body (%v)", got, len(c.body), err)
			if got > c.budget {
				t.Errorf("%d bytes allocated reading a %d-byte body, want at most %d", got, len(c.body), c.budget)
			}
		})
	}
}

// FuzzBodyCredentials: the scan never panics, and whenever the body, parsed as edge parses an
// authenticated caller's (BodyJSON, then interface B's envelope), gives a string key and
// pass, the scan gave the same ones, or refused a credential too long to be one.
func FuzzBodyCredentials(f *testing.F) {
	f.Add("application/json", []byte(`{"key":"k1","a":{"key":"x"},"pass":"p1"}`))
	f.Add("application/x-www-form-urlencoded", []byte("key=k1&pass=p%261&a[]=1"))
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk1\r\n--b--\r\n"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		got, err := bodyCredentials(ct, body, namesB, true)
		_, _ = bodyCredentials(ct, body, namesA, false)
		js, perr := BodyJSON(ct, body, MaxBody)
		if perr != nil {
			return
		}
		var env struct {
			Key  *string `json:"key"`
			Pass *string `json:"pass"`
		}
		if json.Unmarshal(js, &env) != nil || env.Key == nil || env.Pass == nil {
			return
		}
		if errors.Is(err, errCredentialTooLong) && (len(*env.Key) > maxCredential || len(*env.Pass) > maxCredential) {
			return
		}
		if err != nil || got != [2]string{*env.Key, *env.Pass} {
			t.Fatalf("bodyCredentials(%q, %q) = %q, %v; the parsed body gives %q %q", ct, body, got, err, *env.Key, *env.Pass)
		}
	})
}
