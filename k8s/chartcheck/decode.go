package chartcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Manifest is one decoded object of a rendered chart or a manifest file.
type Manifest struct {
	// Source names where the document came from: the template of helm's "# Source:" comment,
	// or the file name.
	Source string
	Object runtime.Object
}

// Decoder decodes YAML streams strictly into the API types of the kinds the chart may render.
// A kind outside that list is an error too: the chart grew something the checks do not cover.
type Decoder struct {
	serializer *kjson.Serializer
}

// NewDecoder registers core, apps, batch, networking, autoscaling/v2, policy and the Prometheus
// Operator's monitoring/v1.
func NewDecoder() (*Decoder, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		appsv1.AddToScheme,
		batchv1.AddToScheme,
		networkingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		policyv1.AddToScheme,
		monitoringv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	// Strict: unknown fields, duplicate fields and case-mismatched field names are errors.
	s := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
	return &Decoder{serializer: s}, nil
}

// Decode splits a multi-document YAML stream and decodes each non-empty document.
func (d *Decoder) Decode(stream []byte, defaultSource string) ([]Manifest, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var out []Manifest
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		source := sourceOf(doc, defaultSource)
		if empty, err := isEmpty(doc); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		} else if empty {
			continue
		}
		obj, _, err := d.serializer.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		out = append(out, Manifest{Source: source, Object: obj})
	}
}

// isEmpty reports a document that holds only comments (helm emits those for disabled templates).
func isEmpty(doc []byte) (bool, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return false, err
	}
	return string(bytes.TrimSpace(j)) == "null", nil
}

func sourceOf(doc []byte, fallback string) string {
	for line := range strings.SplitSeq(string(doc), "\n") {
		if s, ok := strings.CutPrefix(line, "# Source: "); ok {
			return strings.TrimSpace(s)
		}
	}
	return fallback
}
