module github.com/invoicing-api/invoicing-go/pgmirror

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/google/uuid v1.6.0
	github.com/invoicing-api/invoicing-go v0.1.0
	github.com/invoicing-api/invoicing-go/internal/testservers v0.0.0
	github.com/invoicing-api/invoicing-go/webhooks/pginbox v0.1.0
	github.com/jackc/pgx/v5 v5.8.0
	github.com/prometheus/client_golang v1.25.0
	github.com/shopspring/decimal v1.6.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace (
	github.com/invoicing-api/invoicing-go => ../
	github.com/invoicing-api/invoicing-go/internal/testservers => ../internal/testservers
	github.com/invoicing-api/invoicing-go/webhooks/pginbox => ../webhooks/pginbox
)
