module github.com/invoicing-api/invoicing-go/internal/testservers

go 1.26

require (
	github.com/invoicing-api/invoicing-go v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/shopspring/decimal v1.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/time v0.14.0 // indirect
)

replace github.com/invoicing-api/invoicing-go => ../..
