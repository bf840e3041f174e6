module github.com/vros/vros/messaging-svc

go 1.26.0

replace github.com/vros/vros/libs => ../libs

replace github.com/vros/vros/testkit => ../testkit

require github.com/vros/vros/libs v0.0.0

require github.com/shopspring/decimal v1.6.0 // indirect
