module github.com/vros/vros/messaging-svc

go 1.26.0

replace github.com/vros/vros/libs => ../libs

replace github.com/vros/vros/testkit => ../testkit

require (
	github.com/shopspring/decimal v1.6.0
	github.com/vros/vros/libs v0.0.0
	golang.org/x/net v0.61.0
)
