module github.com/vros/vros/messaging-svc

go 1.26.0

replace github.com/vros/vros/libs => ../libs

replace github.com/vros/vros/testkit => ../testkit
