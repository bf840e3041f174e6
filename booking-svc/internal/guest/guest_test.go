package guest_test

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/fields"
)

// read parses body and applies one of the package's readers.
func read[T any](body []byte, reader func(*fields.Object) T) (T, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	out := reader(o)
	return out, v.Err()
}

func decodeNew(body []byte) error {
	_, err := read(body, guest.ReadNew)
	return err
}

const addUser = `{
	"key": "k", "pass": "p", "action": "adduser",
	"email": "Ann.Smith@Example.com",
	"password": "secret1",
	"name": "Ann Smith",
	"company": "ACME",
	"address": "1 Main St",
	"country": "it",
	"phone1": "+39 06 1234",
	"phone2": ""
}`

func TestReadNew(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("email missing", "email: is required", set("email", del)),
		tc("email blank", "email: is required", set("email", " ")),
		tc("email without at", "email: must be a valid email address", set("email", "ann.example.com")),
		tc("email without domain dot", "email: must be a valid email address", set("email", "ann@localhost")),
		tc("email with display name", "email: must be a valid email address", set("email", "Ann <ann@example.com>")),
		tc("email with space", "email: must be a valid email address", set("email", "ann smith@example.com")),
		tc("email double dot", "email: must be a valid email address", set("email", "ann..smith@example.com")),
		tc("email numeric tld", "email: must be a valid email address", set("email", "ann@10.0.0.1")),
		tc("email label hyphen", "email: must be a valid email address", set("email", "ann@-example.com")),
		tc("email local 65 chars", "email: must be a valid email address", set("email", chars(65)+"@example.com")),
		tc("email local 64 chars", "", set("email", chars(64)+"@example.com")),
		tc("email plus tag", "", set("email", "ann+booking@mail.example.co.uk")),
		tc("email internationalised", "", set("email", "zoë@exämple.de")),
		tc("email 254 chars", "", set("email", chars(64)+"@"+chars(63)+"."+chars(63)+"."+chars(57)+".com")),
		tc("email 255 chars", "email: must be at most 254 characters", set("email", chars(64)+"@"+chars(63)+"."+chars(63)+"."+chars(58)+".com")),

		tc("password missing", "password: is required", set("password", del)),
		tc("password blank", "password: is required", set("password", "")),
		tc("password 5 characters", "password: must be at least 6 characters", set("password", "abcde")),
		tc("password 6 characters", "", set("password", "abcdef")),
		tc("password 6 accented characters (12 bytes)", "", set("password", "éééééé")),
		tc("password 72 bytes", "", set("password", chars(72))),
		tc("password 73 bytes", "password: must be at most 72 bytes (the limit of bcrypt)", set("password", chars(73))),
		tc("password 37 two-byte characters", "password: must be at most 72 bytes (the limit of bcrypt)", set("password", strings.Repeat("é", 37))),
		tc("password as number", "", set("password", 1234567)),

		tc("name missing", "name: is required", set("name", del)),
		tc("name 100 chars", "", set("name", chars(100))),
		tc("name 101 chars", "name: must be at most 100 characters", set("name", chars(101))),
		tc("company 200 chars", "", set("company", chars(200))),
		tc("company 201 chars", "company: must be at most 200 characters", set("company", chars(201))),
		tc("address 500 chars", "", set("address", chars(500))),
		tc("address 501 chars", "address: must be at most 500 characters", set("address", chars(501))),
		tc("phone1 30 chars", "", set("phone1", chars(30))),
		tc("phone1 31 chars", "phone1: must be at most 30 characters", set("phone1", chars(31))),
		tc("phone2 31 chars", "phone2: must be at most 30 characters", set("phone2", chars(31))),

		tc("country absent", "", set("country", del)),
		tc("country unknown", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "XX")),
		tc("country alias UK", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "UK")),
		tc("country alpha-3", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "ITA")),
		tc("country name", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "Italy")),

		tc("every violation listed", "email: must be a valid email address\npassword: must be at least 6 characters\nname: is required",
			set("email", "x"), set("password", "123"), set("name", del)),
	}
	check(t, addUser, rows, decodeNew)
}

func TestReadNewValues(t *testing.T) {
	n, err := read([]byte(addUser), guest.ReadNew)
	if err != nil {
		t.Fatal(err)
	}
	want := guest.NewUser{Email: "Ann.Smith@Example.com", Password: "secret1", Name: "Ann Smith", Company: "ACME",
		Address: "1 Main St", Country: "IT", Phone1: "+39 06 1234"}
	if n != want {
		t.Fatalf("got %+v, want %+v", n, want)
	}
	u := n.User("HASH")
	if u.EmailKey() != "ann.smith@example.com" || u.Email != "Ann.Smith@Example.com" || u.PasswordHash != "HASH" {
		t.Fatalf("user %+v", u)
	}
	for _, body := range []string{
		string(apply(t, addUser, set("country", del))),
		string(apply(t, addUser, set("country", ""))),
		string(apply(t, addUser, set("country", nil))),
	} {
		n, err := read([]byte(body), guest.ReadNew)
		if err != nil || n.Country != "US" {
			t.Fatalf("%s: country %q, err %v; want US", body, n.Country, err)
		}
	}
}

func decodeUpdate(body []byte) error {
	_, err := read(body, guest.ReadUpdate)
	return err
}

func TestReadUpdate(t *testing.T) {
	base := `{"userId": 7}`
	rows := []row{
		tc("only userId", ""),
		tc("userId missing", "userId: is required", set("userId", del)),
		tc("userId 0", "userId: must be between 1 and 2147483647", set("userId", 0)),
		tc("userId as string", "", set("userId", "7")),
		tc("userId fraction", "userId: must be a whole number", set("userId", 7.5)),
		tc("email blank", "email: must not be blank", set("email", "")),
		tc("email invalid", "email: must be a valid email address", set("email", "ann@")),
		tc("name blank", "name: must not be blank", set("name", " ")),
		tc("name 101 chars", "name: must be at most 100 characters", set("name", chars(101))),
		tc("password blank means unchanged", "", set("password", "")),
		tc("password 5 characters", "password: must be at least 6 characters", set("password", "abcde")),
		tc("password 73 bytes", "password: must be at most 72 bytes (the limit of bcrypt)", set("password", chars(73))),
		tc("company cleared", "", set("company", "")),
		tc("company 201 chars", "company: must be at most 200 characters", set("company", chars(201))),
		tc("country invalid", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "ZZ")),
		tc("phone2 31 chars", "phone2: must be at most 30 characters", set("phone2", chars(31))),
	}
	check(t, base, rows, decodeUpdate)
}

func TestUpdateApply(t *testing.T) {
	stored := guest.User{UserID: 7, Email: "a@example.com", Name: "Ann", Company: "ACME", Country: "IT", Phone1: "1", PasswordHash: "H"}
	up, err := read([]byte(`{"userId":7,"name":"Anna","company":"","country":"","password":""}`), guest.ReadUpdate)
	if err != nil {
		t.Fatal(err)
	}
	if up.Password != nil {
		t.Fatalf("blank password must mean unchanged, got %q", *up.Password)
	}
	got := up.Apply(stored)
	want := guest.User{UserID: 7, Email: "a@example.com", Name: "Anna", Company: "", Country: "US", Phone1: "1", PasswordHash: "H"}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestReadCredentials(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("email missing", "email: is required", set("email", del)),
		tc("password missing", "password: is required", set("password", del)),
		tc("short password still checked against the store", "", set("password", "abc")),
		tc("password 1025 chars", "password: must be at most 1024 characters", set("password", chars(1025))),
	}
	check(t, `{"email":"a@example.com","password":"secret1"}`, rows, func(b []byte) error {
		_, err := read(b, guest.ReadCredentials)
		return err
	})
}

func TestReadSocial(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("email missing", "email: is required", set("email", del)),
		tc("email invalid", "email: must be a valid email address", set("email", "nobody")),
		tc("name missing", "name: is required", set("name", del)),
		tc("locale missing", "locale: is required", set("locale", del)),
		tc("locale unknown is not an error", "", set("locale", "xx_YY")),
		tc("locale 36 chars", "locale: must be at most 35 characters", set("locale", chars(36))),
	}
	base := `{"email":"a@example.com","name":"Ann","locale":"it_IT"}`
	check(t, base, rows, func(b []byte) error {
		_, err := read(b, guest.ReadSocial)
		return err
	})
	s, err := read([]byte(base), guest.ReadSocial)
	if err != nil || s.Country != "IT" || s.User().Country != "IT" || s.User().PasswordHash != "" {
		t.Fatalf("social %+v, err %v", s, err)
	}
}

func TestCountryFromLocale(t *testing.T) {
	for _, c := range []struct{ locale, want string }{
		{"en_US", "US"},
		{"en-GB", "GB"},
		{"it-IT", "IT"},
		{"it_CH", "CH"},
		{"de_AT.UTF-8", "AT"},
		{"fr", "FR"},
		{"en", "US"},
		{"pt", "BR"},
		{"ja", "JP"},
		{"zh-Hant", "TW"},
		{"es-419", "ES"}, // a region that is not a country: the language's
		{"en_PI", "US"},  // Facebook's pirate English: unknown region
		{"xx", "US"},     // unknown language
		{"", "US"},       // nothing
		{"und", "US"},    // undetermined
		{"!!garbage", "US"},
	} {
		if got := guest.CountryFromLocale(c.locale); got != c.want {
			t.Errorf("CountryFromLocale(%q) = %q, want %q", c.locale, got, c.want)
		}
	}
}

func TestParseCountry(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"us", "US", true}, {"Gb", "GB", true}, {"UK", "", false}, {"XX", "", false},
		{"U", "", false}, {"USA", "", false}, {"1A", "", false}, {"", "", false},
	} {
		got, ok := guest.ParseCountry(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseCountry(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestPasswords(t *testing.T) {
	h, err := guest.HashPassword("secret1", bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if h == "secret1" || !strings.HasPrefix(h, "$2a$04$") {
		t.Fatalf("hash %q", h)
	}
	if !guest.CheckPassword(h, "secret1") {
		t.Fatal("right password refused")
	}
	if guest.CheckPassword(h, "secret2") || guest.CheckPassword(h, "") {
		t.Fatal("wrong password accepted")
	}
	if _, err := guest.HashPassword(chars(73), bcrypt.MinCost); err != guest.ErrPasswordTooLong {
		t.Fatalf("73 bytes: err %v", err)
	}
	if _, err := guest.HashPassword(chars(72), bcrypt.MinCost); err != nil {
		t.Fatalf("72 bytes: err %v", err)
	}
	for _, cost := range []int{0, 3, 32} {
		if _, err := guest.HashPassword("secret1", cost); err == nil {
			t.Fatalf("cost %d accepted", cost)
		}
	}
	if guest.DummyCheck("secret1", bcrypt.MinCost) {
		t.Fatal("DummyCheck matched")
	}
}

// TestDummyCheckTakesTheTimeOfACheck compares a dummy check with a real one
// at the same cost: the dummy must not be an instant "false".
func TestDummyCheckTakesTheTimeOfACheck(t *testing.T) {
	const cost = 8
	h, err := guest.HashPassword("secret1", cost)
	if err != nil {
		t.Fatal(err)
	}
	guest.DummyCheck("warm-up", cost) // computes and caches the dummy hash
	// Interleaved, best of five each: a busy machine slows both alike instead of one of them.
	real, dummy := time.Hour, time.Hour
	for range 5 {
		start := time.Now()
		guest.CheckPassword(h, "wrong")
		real = min(real, time.Since(start))
		start = time.Now()
		guest.DummyCheck("wrong", cost)
		dummy = min(dummy, time.Since(start))
	}
	if dummy < real/3 {
		t.Fatalf("dummy check took %v, a real check %v", dummy, real)
	}
}

func TestCheckPasswordWithoutHash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs one bcrypt at the production cost")
	}
	start := time.Now()
	if guest.CheckPassword("", "secret1") {
		t.Fatal("empty hash matched")
	}
	if time.Since(start) < 10*time.Millisecond {
		t.Fatal("a user without a hash answered instantly")
	}
}
