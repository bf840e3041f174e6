package contract_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
)

func TestSettingsDefaults(t *testing.T) {
	d := contract.Settings{AccountID: "a"}.WithDefaults()
	if !reflect.DeepEqual(d, contract.DefaultSettings("a")) {
		t.Errorf("defaults of an empty settings: %+v", d)
	}
	var set contract.Settings
	if err := json.Unmarshal(contracttest.Golden(contract.SettingsUpdated), &set); err != nil {
		t.Fatal(err)
	}
	if got := set.WithDefaults(); !reflect.DeepEqual(got, set) {
		t.Errorf("defaults replaced what the account set: %+v", got)
	}
	// An event written before weekend_nights and search existed.
	old := contract.Settings{AccountID: "a", Currency: "EUR", Brands: []contract.Brand{{ID: 1, Name: "B"}}}.WithDefaults()
	if old.Currency != "EUR" || old.WeekendNights != 2 || old.Search.DefaultLimit != 10 || *old.Search.PriceFilterEnable ||
		len(old.Brands) != 1 || len(old.LeadSources) != 6 {
		t.Errorf("old settings: %+v", old)
	}
}
