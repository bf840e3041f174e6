package gateway

// Upstream names a service behind edge.
type Upstream string

// The services edge routes to.
const (
	PropertySvc Upstream = "property-svc"
	BookingSvc  Upstream = "booking-svc"
	CatalogSvc  Upstream = "catalog-svc"
	// IntegrationSvc serves webhooks, the iCal feed import and channel distribution
	// (docs/webhooks.md, docs/ical.md, docs/channels.md).
	IntegrationSvc Upstream = "integration-svc"
	// MessagingSvc serves guest messaging: templates, triggers, the message log, the
	// messaging settings and the suppression list (docs/messaging.md).
	MessagingSvc Upstream = "messaging-svc"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	// MaxBody is the largest body edge reads at all (photo uploads as base64).
	MaxBody = 25 * mib
)

// resource is an interface A resource: POST /api/{name} → {service}/internal/a/{name}.
type resource struct {
	service   Upstream
	bodyLimit int
}

// resources is every interface A resource, the spec's and our panel extensions
// (docs/interface-a.md).
var resources = map[string]resource{
	"property":           {PropertySvc, 1 * mib},
	"property-photo":     {PropertySvc, MaxBody},
	"property-policy":    {PropertySvc, 256 * kib},
	"property-rate":      {PropertySvc, 1 * mib},
	"property-method":    {PropertySvc, 256 * kib},
	"property-tax":       {PropertySvc, 256 * kib},
	"property-service":   {PropertySvc, 256 * kib},
	"property-amenity":   {PropertySvc, 1 * mib},
	"account-settings":   {PropertySvc, 256 * kib},
	"account-brand":      {PropertySvc, 256 * kib},
	"property-category":  {PropertySvc, 1 * mib},
	"property-promotion": {PropertySvc, 256 * kib},
	"property-blockdate": {BookingSvc, 256 * kib},
	"property-ical":      {PropertySvc, 256 * kib},
	"webhook":            {IntegrationSvc, 256 * kib},
	"webhook-delivery":   {IntegrationSvc, 256 * kib},
	"ical-feed":          {IntegrationSvc, 256 * kib},

	// Channel distribution (docs/channels.md).
	"channel-connection": {IntegrationSvc, 256 * kib},
	"channel-mapping":    {IntegrationSvc, 256 * kib},
	"channel-log":        {IntegrationSvc, 256 * kib},
	"channel-conflict":   {IntegrationSvc, 256 * kib},

	// Rate plans, restrictions per date and channel markups (docs/rate-plans.md).
	"property-rateplan":    {PropertySvc, 256 * kib},
	"property-restriction": {PropertySvc, 256 * kib},
	"channel-markup":       {PropertySvc, 256 * kib},

	// Owner statements (docs/money.md, "Statements").
	"owner-statement": {BookingSvc, 256 * kib},
	// The account's ledger (docs/money.md, "The ledger").
	"account-ledger": {BookingSvc, 256 * kib},

	// Owners and their books, served by booking-svc (docs/money.md): an expense carries its
	// receipt (at most 5 MiB, as base64), so its limit is 8 MiB, refused before parsing.
	"owner":           {BookingSvc, 256 * kib},
	"owner-agreement": {BookingSvc, 256 * kib},
	"owner-expense":   {BookingSvc, 8 * mib},
	"owner-payout":    {BookingSvc, 256 * kib},

	// Guest messaging (docs/messaging.md, "Interface A resources"): a template's parts are at
	// most 64 KiB each, so a template fits in 256 KiB.
	"message-template":    {MessagingSvc, 256 * kib},
	"message-trigger":     {MessagingSvc, 256 * kib},
	"message-log":         {MessagingSvc, 256 * kib},
	"messaging-settings":  {MessagingSvc, 256 * kib},
	"message-suppression": {MessagingSvc, 256 * kib},
}

// channelAdapters are the adapters whose connections take messages on the public inbound
// route POST /channels/{adapter}/{token} → integration-svc
// /internal/channels/inbound/{adapter}/{token}; bodyLimitChannel bounds its body.
var channelAdapters = map[string]bool{"channex": true, "opentravel": true}

const bodyLimitChannel = 1 * mib

// action is an interface B JSON action: POST /vros/external-booking with {"action": name}
// → {service}/internal/b/{canonical}.
type action struct {
	service   Upstream
	canonical string
}

// bodyLimitB bounds every interface B JSON action; bodyLimitRead an owner-token read's body.
const (
	bodyLimitB    = 1 * mib
	bodyLimitRead = 64 * kib
)

// actions is every interface B action of the spec.
var actions = map[string]action{
	"create":               {BookingSvc, "create"},
	"update":               {BookingSvc, "update"},
	"cancel":               {BookingSvc, "cancel"},
	"retryrefund":          {BookingSvc, "retryrefund"}, // docs/money.md: not in the spec
	"insertservice":        {BookingSvc, "insertservice"},
	"addservice":           {BookingSvc, "insertservice"}, // the spec's example sends this name
	"getinfo":              {BookingSvc, "getinfo"},
	"listbooking":          {BookingSvc, "listbooking"},
	"addbookingpayment":    {BookingSvc, "addbookingpayment"},
	"updatebookingpayment": {BookingSvc, "updatebookingpayment"},
	"removebookingpayment": {BookingSvc, "removebookingpayment"},
	"capturedeposit":       {BookingSvc, "capturedeposit"},
	"releasedeposit":       {BookingSvc, "releasedeposit"},
	"updatearrivalform":    {BookingSvc, "updatearrivalform"},
	"adduser":              {BookingSvc, "adduser"},
	"updateuser":           {BookingSvc, "updateuser"},
	"login":                {BookingSvc, "login"},
	"usesocialuser":        {BookingSvc, "usesocialuser"},
	"getpayment":           {PropertySvc, "getpayment"},
	"setprices_minnights":  {PropertySvc, "setprices_minnights"},
	"gettax":               {CatalogSvc, "gettax"},
	"getservice":           {CatalogSvc, "getservice"},
	"getblockdates":        {CatalogSvc, "getblockdates"},
	"getnonavailabledate":  {CatalogSvc, "getnonavailabledate"},
	"getratetable":         {CatalogSvc, "getratetable"},
	"listcountry":          {CatalogSvc, "listcountry"},
	"getproperties":        {CatalogSvc, "getproperties"},
	"getpropertyinfo":      {CatalogSvc, "getpropertyinfo"},
	"getcalendar":          {CatalogSvc, "getcalendar"},
	"getreservations":      {CatalogSvc, "getreservations"},
	"getdiscounts":         {CatalogSvc, "getdiscounts"},
}

// reads is every owner-token read: GET or POST /vros/api/{name}/owner_token/{token}
// [/property/{id}] → POST {service}/internal/read/{name} with the parameters as JSON.
var reads = map[string]Upstream{
	"default-config":             CatalogSvc,
	"get-all-amenity":            CatalogSvc,
	"get-min-max-price-property": CatalogSvc,
	"banner-gallery":             CatalogSvc,
	"property-gallery":           CatalogSvc,
	"property-amenity":           CatalogSvc,
	"property-detail":            CatalogSvc,
	"get-all-property-info":      CatalogSvc,
	"search-rental":              CatalogSvc,
	"property-category":          CatalogSvc,
	"get-property-related":       CatalogSvc,
}
