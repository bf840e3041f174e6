package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestDocumentsLoad: every document parses, is valid OpenAPI 3.1, and its examples match
// their schemas.
func TestDocumentsLoad(t *testing.T) {
	for _, name := range Documents {
		doc, err := Load(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if !doc.IsOpenAPI31OrLater() {
			t.Errorf("%s: openapi %s, want 3.1", name, doc.OpenAPI)
		}
	}
}

// TestEngineRefusalsDocumented: every operation of the public booking API lists the
// refusals edge answers before forwarding (edge/internal/gateway, docs/booking-engine.md "At
// edge"), preflights included: a wrong owner token (401), an origin no brand lists (403), a
// limit (429) on every route; and on a checkout's routes, an id edge refuses as a path of no
// route (404: anything but 1–64 letters, digits, `-`, `_`), which `make fuzz-api` sends.
func TestEngineRefusalsDocumented(t *testing.T) {
	doc, err := Load(context.Background(), "booking-engine")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		applies func(path string) bool
		status  string
	}{
		{"a wrong owner token", func(p string) bool { return strings.HasPrefix(p, "/widget/api/") }, "401"},
		{"an origin of no brand", func(p string) bool { return strings.HasPrefix(p, "/widget/api/") }, "403"},
		{"over a limit", func(p string) bool { return strings.HasPrefix(p, "/widget/api/") }, "429"},
		{"a checkout id edge refuses", func(p string) bool { return strings.Contains(p, "{checkout_id}") }, "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for path, item := range doc.Paths.Map() {
				if !tc.applies(path) {
					continue
				}
				for method, op := range item.Operations() {
					n++
					if op.Responses.Value(tc.status) == nil {
						t.Errorf("%s %s (%s) does not list %s", method, path, op.OperationID, tc.status)
					}
				}
			}
			if n == 0 {
				t.Fatal("no operation to check")
			}
		})
	}
}

// TestSchemasAcceptAnswers: answers vros gives (as `make fuzz-api` saw them) match the schema
// their document names for them.
func TestSchemasAcceptAnswers(t *testing.T) {
	for _, tc := range []struct {
		doc, schema, answer string
	}{
		// A brand with origins in account-settings' answer (issue 30 added them).
		{"interface-a", "BrandOut", `{"id":1,"name":"Fuzzing Villas","origins":["https://fuzz.example"],"properties":[3]}`},
		{"interface-a", "BrandOut", `{"id":2,"name":"Aurora Villas","domain":"aurora.example","domains":["aurora.example"],"default_language":"it","default_currency":"EUR","lead_source":5,"search":{"default_limit":12,"price_filter_enable":true,"rate_type":"weekly"},"properties":[2]}`},
		// Issue 31's resources: a list of rate plans, a plan with its restrictions as a
		// property's event carries it, and the markups of a level.
		{"interface-a", "property-rateplan.answer", `{"code":200,"data":{"rate_plans":[{"id":0,"name":"Standard","inclusions":"","cancellation":{"policy":"flexible"}},{"id":1,"name":"Non-refundable","inclusions":"Breakfast","cancellation":{"policy":"custom","tiers":[{"days_before":30,"percent":"100"}]},"adjustment":{"type":"percent","value":"-10"},"ranges":[{"start_date":"2030-07-01","end_date":"2030-08-31","type":"percent","value":"-5"}],"minimum_stay":2,"sold_on":{"direct":true,"all_brands":false,"brands":[1],"channels":["airbnb"]}}]}}`},
		{"interface-a", "RatePlanData", `{"id":1,"name":"A","inclusions":"","cancellation":{"policy":"flexible"},"adjustment":{"type":"amount","value":"1"},"sold_on":{"direct":true,"all_brands":false},"restrictions":[{"start_date":"2030-07-05","end_date":"2030-07-06","min_stay_through":2,"stop_sell":true}]}`},
		{"interface-a", "channel-markup.answer", `{"code":200,"data":{"channel_markups":[{"channel":"airbnb","type":"percent","value":"15"},{"channel":"vrbo","type":"amount","value":"-5.5"}]}}`},
		// Issue 34's messaging resources, as messaging-svc's handlers answered them.
		{"interface-a", "message-template.answer", `{"code":200,"data":{"template_id":1,"trigger":"stay.arrival","language":"en","brand_id":0,"property_id":0,"subject":"See you on {{date .Booking.Checkin}}","html":"\u003cp\u003eDear {{.Guest.FirstName}},\u003c/p\u003e\n\u003cp\u003e{{.Property.Name}} awaits.\u003c/p\u003e","text":"","created_at":"2026-11-30T01:06:52.686Z","updated_at":"2026-11-30T01:06:52.686Z"}}`},
		{"interface-a", "message-template.answer", `{"code":200,"data":{"limit":50,"page":1,"templates":[{"template_id":1,"trigger":"stay.arrival","language":"en","brand_id":0,"property_id":0,"subject":"See you on {{date .Booking.Checkin}}","html":"\u003cp\u003eDear {{.Guest.FirstName}},\u003c/p\u003e\n\u003cp\u003e{{.Property.Name}} awaits.\u003c/p\u003e","text":"","created_at":"2026-11-30T01:06:52.686Z","updated_at":"2026-11-30T01:06:52.686Z"}],"total":1}}`},
		{"interface-a", "message-template.answer", `{"code":200,"data":{"subject":"Grazie per aver soggiornato presso Casa del Limone","html":"\u003cp\u003eGentile Ann,\u003c/p\u003e\n\u003cp\u003egrazie per aver scelto Casa del Limone per il suo soggiorno a Positano. Speriamo che il soggiorno sia stato piacevole e il rientro a casa sereno.\u003c/p\u003e\n\u003cp\u003eLa sua opinione è molto importante per noi: se ha un momento, risponda a questa email e ci racconti che cosa le è piaciuto e che cosa potremmo migliorare.\u003c/p\u003e\n\u003cp\u003eSaremo felici di ospitarla di nuovo – trova tutti i nostri alloggi su \u003ca href=\"https://www.amalficoastvillas.example\"\u003ehttps://www.amalficoastvillas.example\u003c/a\u003e.\u003c/p\u003e\n\u003cp\u003eCordiali saluti,\u003cbr\u003eAmalfi Coast Villas\u003c/p\u003e\n","text":"Gentile Ann,\n\ngrazie per aver scelto Casa del Limone per il suo soggiorno a Positano. Speriamo che il soggiorno sia stato piacevole e il rientro a casa sereno.\n\nLa sua opinione è molto importante per noi: se ha un momento, risponda a questa email e ci racconti che cosa le è piaciuto e che cosa potremmo migliorare.\n\nSaremo felici di ospitarla di nuovo – trova tutti i nostri alloggi su https://www.amalficoastvillas.example.\n\nCordiali saluti,\nAmalfi Coast Villas\n","source":"default","template_id":null}}`},
		{"interface-a", "message-trigger.answer", `{"code":200,"data":{"triggers":[{"trigger":"booking.confirmed","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"booking.modified","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"booking.cancelled","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"payment.received","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"payment.failed","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"payment.due_soon","to":"guest","enabled":true,"days":3,"time":"10:00","scheduled":true},{"trigger":"deposit.held","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"deposit.released","to":"guest","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"stay.arrival","to":"guest","enabled":true,"days":3,"time":"10:00","scheduled":true},{"trigger":"stay.checkout","to":"guest","enabled":true,"days":1,"time":"18:00","scheduled":true},{"trigger":"stay.thanks","to":"guest","enabled":true,"days":1,"time":"10:00","scheduled":true},{"trigger":"owner.booking","to":"owner","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"owner.cancellation","to":"owner","enabled":true,"days":null,"time":null,"scheduled":false},{"trigger":"owner.channel_conflict","to":"owner","enabled":true,"days":null,"time":null,"scheduled":false}]}}`},
		{"interface-a", "message-log.answer", `{"code":200,"data":{"limit":2,"messages":[{"message_id":"dump-1796000812680775502-1:booking.confirmed:43:once","trigger":"booking.confirmed","booking_id":43,"property_id":7,"to":"guest","address":"","language":"","subject":"","status":"pending","attempts":0,"send_at":"2027-06-01T09:00:00Z","sent_at":null,"answer":"","opens":0,"smtp_message_id":"","created_at":"2027-06-01T09:00:00.004Z","updated_at":"2027-06-01T09:00:00.004Z"},{"message_id":"dump-1796000812680775502-1:stay.arrival:42:2027-06-07T10:00","trigger":"stay.arrival","booking_id":42,"property_id":7,"to":"guest","address":"","language":"","subject":"","status":"scheduled","attempts":0,"send_at":"2027-06-04T09:00:00Z","sent_at":null,"answer":"","opens":0,"smtp_message_id":"","created_at":"2027-06-01T09:00:00.003Z","updated_at":"2027-06-01T09:00:00.003Z"}],"page":1,"total":5}}`},
		{"interface-a", "messaging-settings.answer", `{"code":200,"data":{"from_name":"","from_address":"","reply_to":"","notify":["o@x.example"],"smtp":{"host":"smtp.example.com","port":587,"username":"","tls":"starttls"},"smtp_password_set":true,"version":1}}`},
		{"interface-a", "messaging-settings.answer", `{"code":200,"data":{"address":"a@bounce.example","answer":"","error":"smtp: RCPT TO: 550 5.1.1 no such user","ok":false}}`},
		{"interface-a", "message-suppression.answer", `{"code":200,"data":{"limit":50,"page":1,"suppressions":[],"total":0}}`},
		// Issue 32's channel resources, as integration-svc's handlers answered them.
		{"interface-a", "channel-connection.answer", `{"code":200,"data":{"connection_id":1,"adapter":"channex","endpoint":"http://127.0.0.1:9/cm","credentials_set":true,"channel":"bookingcom","enabled":true,"days":365,"inbound_token":"PS55sTaRxrqjd-0CPHXGbYX51916SsxnlK2HeJ7YPRk","inbound_url":"https://vros.example/channels/channex/PS55sTaRxrqjd-0CPHXGbYX51916SsxnlK2HeJ7YPRk","mappings":0,"open_conflicts":0,"created_at":"2026-11-29T18:57:14Z","updated_at":"2026-11-29T18:57:14Z"}}`},
		{"interface-a", "channel-connection.answer", `{"code":200,"data":{"connection_id":11,"duration_ms":0,"error":"","http_status":200,"ok":true}}`},
		{"interface-a", "channel-mapping.answer", `{"code":200,"data":{"connection_id":31,"deleted":true,"property_id":17}}`},
		{"interface-a", "channel-log.answer", `{"code":200,"data":{"entries":[{"log_id":1795978634359880,"connection_id":11,"property_id":0,"direction":"out","kind":"test","status":"error","http_status":401,"error":"channel manager answered 401: unauthorized","from":null,"to":null,"at":"2026-11-29T18:57:14.359Z","duration_ms":0,"truncated":false}],"next_cursor":null}}`},
		{"interface-a", "channel-log.answer", `{"code":200,"data":{"log_id":1795978634746991,"connection_id":3,"property_id":18,"direction":"out","kind":"availability","status":"retrying","http_status":429,"error":"channel manager answered 429","from":"2027-05-01","to":"2027-05-03","at":"2027-05-01T08:05:00Z","duration_ms":40,"truncated":false,"request":"{\"values\":[5]}","response":"{\"data\":\"ok\"}"}}`},
		{"interface-a", "channel-conflict.answer", `{"code":200,"data":{"conflict_id":12,"connection_id":3,"reservation_id":"res","revision_id":"rev1","channel":"BookingCom","property_id":17,"checkin":"2027-01-10","checkout":"2027-01-13","reason":"nights_taken","message":"","nights":["2027-01-11"],"booking_ids":[7],"guest_name":"Ada L","total":"450.00","currency":"EUR","open":false,"created_at":"2026-11-29T18:57:14Z","resolved_at":"2026-11-29T18:57:14Z","note":"guest moved"}}`},
		// Issue 33's money: owners, agreements, expenses, payouts and statements (docs/money.md),
		// the refund and deposit hold interface B answers, and their webhook payloads.
		{"interface-a", "owner.answer", `{"code":200,"data":{"owner_id":1,"name":"Maria Bianchi","kind":"person","email":"maria@example.com","phone":"","address":"","tax_id":"","language":"it","payout_set":true,"payout_summary":"IBAN •••• 3456","created_at":"2026-11-29T21:00:00Z","updated_at":"2026-11-29T21:00:00Z"}}`},
		{"interface-a", "owner.answer", `{"code":200,"data":{"owner_id":1}}`},
		{"interface-a", "owner-agreement.answer", `{"code":200,"data":{"total":1,"page":1,"limit":50,"agreements":[{"agreement_id":1,"property_id":2,"internal_code":"V1","owner_id":1,"start_date":"2027-01-01","end_date":"","commission_percent":"20.00","commission_basis":"components","commission_components":["rent","services"],"monthly_fees":[{"name":"Management","amount":"50.00"}],"currency":"EUR","created_at":"2026-11-29T21:00:00.123456Z","updated_at":"2026-11-29T21:00:00Z"}]}}`},
		{"interface-a", "owner-expense.answer", `{"code":200,"data":{"expense_id":3,"content_type":"image/png","size":68,"data":"iVBORw0KGgo="}}`},
		{"interface-a", "owner-payout.answer", `{"code":200,"data":{"payout_id":4}}`},
		{"interface-a", "owner-expense.answer", `{"code":200,"data":{"expense_id":3,"property_id":2,"internal_code":"V1","owner_id":1,"date":"2027-01-15","amount":"120.00","currency":"EUR","category":"repairs","description":"Boiler","borne_by":"owner","receipt":{"content_type":"image/png","size":68},"created_at":"2026-11-29T21:00:00Z","updated_at":"2026-11-29T21:00:00Z"}}`},
		{"interface-a", "owner-payout.answer", `{"code":200,"data":{"payout_id":1,"owner_id":1,"date":"2027-02-05","amount":"950.00","currency":"EUR","method":"bank_transfer","reference":"January 2027","created_at":"2026-11-29T21:00:00Z"}}`},
		{"interface-a", "owner-statement.answer", `{"code":200,"data":{"statement_id":"st1","revision":2,"created_at":"2027-02-01T08:00:00Z","owner":{"owner_id":1,"name":"Maria Bianchi"},"currency":"JPY","from":"2027-01-01","to":"2027-01-31","opening_balance":"0","bookings":[{"booking_id":7,"property_id":2,"lines":[{"date":"2027-01-13","line":"rent","label":"Rent","amount":"60000","entry_id":"a:booking:7:1"}],"net":"60000"}],"expenses":[],"fees":[],"payouts":[],"other":[],"totals":[{"line":"rent","amount":"60000"}],"net":"60000","closing_balance":"60000","changes":[{"entry_id":"a:booking:7:2","date":"2027-01-13","posted_at":"2027-02-02T08:00:00Z","line":"rent","label":"Rent","amount":"1000","booking_id":7}]}}`},
		{"interface-a", "owner-statement.answer", `{"code":200,"data":{"statement_id":"st1","revision":2,"format":"pdf","content_type":"application/pdf","filename":"statement-1-2027-01.pdf","file":"JVBERi0="}}`},
		{"interface-a", "owner-statement.answer", `{"code":200,"data":{"statement_id":"st1","url":"https://vros.example/statements/tok","path":"/statements/tok","pdf_url":"https://vros.example/statements/tok/statement.pdf","csv_url":"https://vros.example/statements/tok/statement.csv","expires_at":"2027-05-01T08:00:00Z"}}`},
		{"interface-a", "owner-statement.answer", `{"code":200,"data":{"statements":[{"statement_id":"st1","owner_id":1,"currency":"EUR","from":"2027-01-01","to":"2027-01-31","revision":1,"created_at":"2027-02-01T08:00:00Z","updated_at":"2027-02-01T08:00:00Z"}]}}`},
		{"interface-a", "account-ledger.answer", `{"code":200,"data":{"entries":[{"entry_id":"a:expense:3:1","date":"2027-01-15","currency":"JPY","source":"expense:3","posted_at":"2027-01-15T10:00:00.123Z","postings":[{"account":"owner","amount":"12000","owner_id":7,"property_id":2,"line":"expense","label":"Boiler"},{"account":"cash","amount":"-12000","property_id":2,"line":"expense","label":"Boiler"}]}]}}`},
		{"interface-a", "account-ledger.answer", `{"code":200,"data":{"as_of":"2027-03-31","currency":"EUR","balances":[]}}`},
		{"interface-a", "RefundEventData", `{"booking_id":1,"property_id":2,"refund":{"status":"failed","amount":"150.00","refunded":"50.00","currency":"EUR","policy":"custom","percent":"50.5","override":true},"booking":null}`},
		{"interface-a", "DepositEventData", `{"booking_id":1,"property_id":2,"deposit":{"status":"captured","amount":"300.00","currency":"EUR","due_date":"2027-01-30","captured_amount":"120.00","held_at":"2027-01-30T09:00:00Z","release_on":"2027-02-12","captured_at":"2027-02-08T10:00:00Z","reauthorizations":2},"booking":null}`},
		{"interface-b", "cancelData", `{"bookingId":5,"refund":{"status":"pending","policy":"moderate","percent":50,"policyAmount":221.75,"netPaid":150,"amount":150,"refunded":50,"currency":"EUR","override":false,"parts":[{"paymentId":"9","refundOf":"4","amount":50,"method":"manual","status":"succeeded","attempts":1},{"refundOf":"3","amount":100,"method":"card","status":"pending","attempts":1,"lastError":"gateway unavailable","nextAttemptAt":"2027-01-05 12:01:00"}]},"depositHold":null}`},
		{"interface-b", "BookingPayment", `{"paymentId":"9","amount":-50,"currency":"EUR","description":"Refund","time":"2027-01-05 12:00:00","method":"manual","kind":"refund","refundOf":"4"}`},
		{"interface-b", "DepositHoldState", `{"status":"captured","amount":300,"currency":"EUR","dueDate":"2027-01-30","heldAt":"2027-01-30 10:00:00","authorizationId":"pi_1","reauthorizations":1,"releaseOn":"2027-02-12","releasedAt":null,"capturedAmount":120,"captureReason":"Broken table","capturedAt":"2027-02-08 11:00:00","lastError":null}`},
		{"interface-b", "DepositHoldState", `{"status":"scheduled","amount":300,"currency":"EUR","dueDate":"2027-01-30","heldAt":null,"authorizationId":null,"reauthorizations":0,"releaseOn":"","releasedAt":null,"capturedAmount":null,"captureReason":null,"capturedAt":null,"lastError":null}`},
		{"interface-b", "RefundState", `{"status":"failed","policy":"flexible","percent":100,"policyAmount":443.5,"netPaid":100,"amount":100,"override":false,"reason":"","decidedAt":"2027-01-05 12:00:00","refunded":0,"parts":[{"paymentId":"9","refundOf":"3","amount":100,"method":"card","status":"failed","attempts":6,"lastError":"card_declined","nextAttemptAt":null,"refundId":""}]}`},
	} {
		t.Run(tc.doc+" "+tc.schema, func(t *testing.T) {
			doc, err := Load(context.Background(), tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			ref := doc.Components.Schemas[tc.schema]
			if ref == nil || ref.Value == nil {
				t.Fatalf("no schema %s", tc.schema)
			}
			var v any
			if err := json.Unmarshal([]byte(tc.answer), &v); err != nil {
				t.Fatal(err)
			}
			if err := ref.Value.VisitJSON(v); err != nil {
				t.Errorf("%s: %v", tc.answer, err)
			}
		})
	}
}
