module blimp.bench/apns-go

go 1.19
