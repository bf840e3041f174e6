package property_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const categoryCreate = `{"action":"create","category":{"name":"Beach houses","show_search_engine":"0",
	"languages":{"it":"Case al mare","pt_BR":"Casas de praia"},"properties":["V1","V2"]}}`

func decodeGroup(body []byte) error {
	_, err := property.DecodeGroup(body)
	return err
}

func TestDecodeGroup(t *testing.T) {
	rows := []row{
		tc("valid create", ""),
		tc("action missing", "action: is required", set("action", del)),
		tc("action unknown", "action: must be one of create, update, delete", set("action", "rename")),
		tc("category missing", "category: is required (or tag, to change a tag)", set("category", del)),
		tc("category and tag", "tag: must not be sent with category: a request changes one category or one tag", set("tag", obj(`{"name":"x"}`))),
		tc("category not an object", "category: must be an object", set("category", "Beach")),
		tc("name missing on create", "category.name: is required", set("category.name", del)),
		tc("name blank on create", "category.name: is required", set("category.name", " ")),
		tc("name 100 chars", "", set("category.name", chars(100))),
		tc("name 101 chars", "category.name: must be at most 100 characters", set("category.name", chars(101))),
		tc("show_search_engine absent", "", set("category.show_search_engine", del)),
		tc("show_search_engine not a boolean", "category.show_search_engine: must be a boolean", set("category.show_search_engine", "hidden")),
		tc("languages absent", "", set("category.languages", del)),
		tc("languages [] clears", "", set("category.languages", []any{})),
		tc("languages unknown tag", "category.languages.xx: must be keyed by a BCP 47 language tag", set("category.languages.xx", "Xx")),
		tc("languages blank name", "category.languages.it: is required", set("category.languages.it", "")),
		tc("languages name 101 chars", "category.languages.it: must be at most 100 characters", set("category.languages.it", chars(101))),
		tc("languages not an object", "category.languages: must be an object", set("category.languages", "it")),
		tc("languages 51", "category.languages: must have at most 50 languages", set("category.languages", obj(manyLanguages(51)))),
		tc("properties absent", "", set("category.properties", del)),
		tc("properties empty", "", set("category.properties", []any{})),
		tc("properties not a list", "category.properties: must be an array", set("category.properties", "V1")),
		tc("properties code 11 chars", "category.properties[1]: must be at most 10 characters", set("category.properties[1]", chars(11))),
		tc("properties blank code", "category.properties[0]: must not be empty", set("category.properties[0]", "")),
		tc("properties code twice", `category.properties: lists "V1" twice`, set("category.properties[1]", "V1")),
		tc("properties 2001", "category.properties: must have at most 2000 items", set("category.properties", many(2001, `"V1"`))),
		tc("update needs id", "category.id: is required", set("action", "update")),
		tc("update id 0", "category.id: must be between 1 and 9007199254740992", set("action", "update"), set("category.id", 0)),
		tc("update name may be absent", "", set("action", "update"), set("category.id", "7"), set("category.name", del)),
		tc("update name blank", "category.name: must not be blank", set("action", "update"), set("category.id", 7), set("category.name", "")),
		tc("delete reads only the id", "", set("action", "delete"), set("category", obj(`{"id":7,"name":""}`))),
		tc("delete without id", "category.id: is required", set("action", "delete"), set("category", obj(`{}`))),
		tc("every violation listed", "category.name: must be at most 100 characters\ncategory.show_search_engine: must be a boolean",
			set("category.name", chars(101)), set("category.show_search_engine", 2)),
	}
	check(t, categoryCreate, rows, decodeGroup)

	tagRows := []row{
		tc("valid tag", ""),
		tc("tag name missing", "tag.name: is required", set("tag.name", del)),
		tc("tag show_search_engine ignored", "", set("tag.show_search_engine", "hidden")),
		tc("tag update without id", "tag.id: is required", set("action", "update")),
		tc("tag properties code twice", `tag.properties: lists "V2" twice`, set("tag.properties", []any{"V2", "V2"})),
	}
	check(t, `{"action":"create","tag":{"name":"Sea view","languages":{"it":"Vista mare"},"properties":["V2"]}}`, tagRows, decodeGroup)
}

func manyLanguages(n int) string {
	tags := []string{"en", "it", "de", "fr", "es", "pt", "nl", "sv", "da", "fi", "pl", "cs", "sk", "hu", "ro", "bg", "el", "tr",
		"ru", "uk", "ja", "ko", "zh", "ar", "he", "hi", "th", "vi", "id", "ms", "sl", "hr", "sr", "lt", "lv", "et", "is", "ga",
		"cy", "mt", "sq", "mk", "bs", "ka", "hy", "az", "kk", "uz", "mn", "ne", "si", "ta", "te"}
	out := "{"
	for i := range n {
		if i > 0 {
			out += ","
		}
		out += `"` + tags[i] + `":"x"`
	}
	return out + "}"
}

func TestDecodeGroupValues(t *testing.T) {
	req, err := property.DecodeGroup([]byte(categoryCreate))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case req.Action != property.Create || req.Kind != property.KindCategory || *req.Name != "Beach houses":
		t.Errorf("request %+v", req)
	case req.ShowSearchEngine == nil || *req.ShowSearchEngine:
		t.Errorf("show_search_engine %v, want false", req.ShowSearchEngine)
	case !maps.Equal(*req.Languages, map[string]string{"it": "Case al mare", "pt-BR": "Casas de praia"}):
		t.Errorf("languages %v", *req.Languages)
	case !slices.Equal(*req.Properties, []string{"V1", "V2"}):
		t.Errorf("properties %v", *req.Properties)
	}
	// Absent on create: the domain's defaults (shown, no names, no properties).
	req, err = property.DecodeGroup([]byte(`{"action":"create","tag":{"name":"Pets"}}`))
	if err != nil || req.Kind != property.KindTag || req.ShowSearchEngine != nil || req.Languages != nil || req.Properties != nil {
		t.Errorf("tag with a name only: %+v, %v", req, err)
	}
	req, err = property.DecodeGroup([]byte(`{"action":"update","category":{"id":"12","properties":[]}}`))
	if err != nil || req.ID != 12 || req.Name != nil || req.Properties == nil || len(*req.Properties) != 0 {
		t.Errorf("update clearing the properties: %+v, %v", req, err)
	}
}
