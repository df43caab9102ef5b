package jsonobj_test

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

func TestObjectKeepsOrder(t *testing.T) {
	o := jsonobj.Object{{Key: "z", Value: 1}, {Key: "a", Value: "x\"y"}, {Key: "m", Value: nil}}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.Equal(t, `{"z":1,"a":"x\"y","m":null}`, string(b))

	b, err = json.Marshal(jsonobj.Object{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
}

func TestObjectNested(t *testing.T) {
	o := jsonobj.Object{{Key: "outer", Value: jsonobj.Object{{Key: "b", Value: true}, {Key: "a", Value: []int{1}}}}}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.Equal(t, `{"outer":{"b":true,"a":[1]}}`, string(b))
}

func TestObjectValuesUseTheEncodersOptions(t *testing.T) {
	o := jsonobj.Object{{Key: "total", Value: decimal.RequireFromString("110.5")}, {Key: "lines", Value: []string(nil)}}
	b, err := json.Marshal(o, jsonopt.Encode)
	require.NoError(t, err)
	assert.Equal(t, `{"total":110.5,"lines":null}`, string(b))

	b, err = json.Marshal(jsonobj.Object{{Key: "name", Value: "<b>&"}}, jsontext.EscapeForHTML(true))
	require.NoError(t, err)
	assert.Equal(t, `{"name":"\u003cb\u003e\u0026"}`, string(b))
}

func TestObjectWithAKeyTwice(t *testing.T) {
	o := jsonobj.Object{{Key: "a", Value: 1}, {Key: "a", Value: 2}}
	_, err := json.Marshal(o)
	assert.Error(t, err, "v2 refuses duplicate names by default")

	b, err := json.Marshal(o, jsontext.AllowDuplicateNames(true))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1,"a":2}`, string(b))
}

func TestObjectMarshalError(t *testing.T) {
	_, err := json.Marshal(jsonobj.Object{{Key: "f", Value: func() {}}})
	assert.Error(t, err)
}

func TestObjectWithSetGet(t *testing.T) {
	base := jsonobj.Object{{Key: "id", Value: "1"}}
	more := base.With(jsonobj.Field{Key: "n", Value: 2})
	assert.Len(t, base, 1, "With leaves the receiver alone")
	assert.Len(t, more, 2)

	more = more.Set("n", 3).Set("new", "v")
	v, ok := more.Get("n")
	assert.True(t, ok)
	assert.Equal(t, 3, v)
	_, ok = more.Get("missing")
	assert.False(t, ok)
	b, err := json.Marshal(more)
	require.NoError(t, err)
	assert.Equal(t, `{"id":"1","n":3,"new":"v"}`, string(b))
}

func TestParseKeepsOrderAndExactValues(t *testing.T) {
	o, err := jsonobj.Parse([]byte(`{"z": 1.50, "a": {"b": [true]}, "a": "x"}`))
	require.NoError(t, err)
	require.Len(t, o, 3)
	assert.Equal(t, []string{"z", "a", "a"}, []string{o[0].Key, o[1].Key, o[2].Key})
	assert.Equal(t, jsontext.Value(`1.50`), o[0].Value, "a number keeps its text")

	b, err := json.Marshal(o.Set("z", "2"), jsontext.AllowDuplicateNames(true))
	require.NoError(t, err)
	assert.Equal(t, `{"z":"2","a":{"b":[true]},"a":"x"}`, string(b))

	for _, bad := range []string{`[1]`, `{"a":}`, `{"a":1} {}`, ``} {
		_, err := jsonobj.Parse([]byte(bad))
		assert.Error(t, err, bad)
	}
}
