module github.com/vros/vros/messaging-svc

go 1.26.0

replace github.com/vros/vros/libs => ../libs

replace github.com/vros/vros/testkit => ../testkit

require (
	github.com/shopspring/decimal v1.6.0
	github.com/vros/vros/libs v0.0.0
	github.com/vros/vros/testkit v0.0.0
	github.com/wneessen/go-mail v0.8.1
	golang.org/x/net v0.61.0
	golang.org/x/time v0.16.0
)

require (
	github.com/emersion/go-sasl v0.0.0-20241020182733-b788ff22d5a6 // indirect
	github.com/emersion/go-smtp v0.25.1 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
