{{/*
Chart name, truncated to 63 characters (a DNS label).
*/}}
{{- define "vros.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's objects; the release name alone when it already contains the chart
name, so that release "vros" yields vros-edge, vros-property-svc, ...
Truncated to 47 characters: the longest suffix added to it is "-integration-svc" (16).
*/}}
{{- define "vros.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 47 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 47 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 47 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "vros.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The services. One list drives every per-service template, so adding a service is one entry.
  key:     its block in values.yaml (see vros.componentKey)
  addrEnv: the variable holding its listen address
  secrets: the keys of .Values.secrets.keys it receives, with the variable each one becomes:
           only the internal keys it signs with or accepts (docs/internal-auth.md)
*/}}
{{- define "vros.components" -}}
- name: edge
  key: edge
  addrEnv: VROS_EDGE_ADDR
  secrets:
    adminToken: VROS_EDGE_ADMIN_TOKEN
    internalKeyEdge: VROS_INTERNAL_KEY_EDGE
- name: property-svc
  key: propertySvc
  addrEnv: VROS_PROPERTY_ADDR
  secrets:
    internalKeyEdge: VROS_INTERNAL_KEY_EDGE
    internalKeyBooking: VROS_INTERNAL_KEY_BOOKING
    encryptionKey: VROS_ENCRYPTION_KEY
- name: booking-svc
  key: bookingSvc
  addrEnv: VROS_BOOKING_ADDR
  secrets:
    internalKeyEdge: VROS_INTERNAL_KEY_EDGE
    internalKeyIntegration: VROS_INTERNAL_KEY_INTEGRATION
    internalKeyMessaging: VROS_INTERNAL_KEY_MESSAGING
    internalKeyBooking: VROS_INTERNAL_KEY_BOOKING
    encryptionKey: VROS_ENCRYPTION_KEY
- name: catalog-svc
  key: catalogSvc
  addrEnv: VROS_CATALOG_ADDR
  secrets:
    internalKeyEdge: VROS_INTERNAL_KEY_EDGE
- name: integration-svc
  key: integrationSvc
  addrEnv: VROS_INTEGRATION_ADDR
  secrets:
    internalKeyEdge: VROS_INTERNAL_KEY_EDGE
    internalKeyIntegration: VROS_INTERNAL_KEY_INTEGRATION
    encryptionKey: VROS_ENCRYPTION_KEY
- name: messaging-svc
  key: messagingSvc
  addrEnv: VROS_MESSAGING_ADDR
  secrets:
    internalKeyEdge: VROS_INTERNAL_KEY_EDGE
    internalKeyMessaging: VROS_INTERNAL_KEY_MESSAGING
    encryptionKey: VROS_ENCRYPTION_KEY
{{- end }}

{{/*
Common labels; call with the root context.
*/}}
{{- define "vros.labels" -}}
helm.sh/chart: {{ include "vros.chart" . }}
app.kubernetes.io/name: {{ include "vros.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: vros
{{- end }}

{{/*
Selector labels of one component; call with (dict "root" $ "component" "edge").
*/}}
{{- define "vros.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vros.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Labels of one component's objects; call with (dict "root" $ "component" "edge").
*/}}
{{- define "vros.componentLabels" -}}
{{ include "vros.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Object name of one component: <fullname>-<component>.
*/}}
{{- define "vros.componentName" -}}
{{- printf "%s-%s" (include "vros.fullname" .root) .component }}
{{- end }}

{{/*
Values key of a component: property-svc -> propertySvc.
*/}}
{{- define "vros.componentKey" -}}
{{- . | replace "-svc" "Svc" }}
{{- end }}

{{/*
In-cluster URL of one component's Service; call with (dict "root" $ "component" "property-svc").
*/}}
{{- define "vros.componentURL" -}}
{{- $v := index .root.Values (include "vros.componentKey" .component) }}
{{- printf "http://%s:%v" (include "vros.componentName" .) $v.port }}
{{- end }}

{{/*
Public base URL of edge, given out as edge_url with new credentials: edge.publicURL, else
derived from the Ingress host. edge issues no credentials without one (it never trusts the
request's Host header), so the chart refuses to render without either.
*/}}
{{- define "vros.edgePublicURL" -}}
{{- if .Values.edge.publicURL }}
{{- .Values.edge.publicURL }}
{{- else if and .Values.ingress.enabled .Values.ingress.host }}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) .Values.ingress.host }}
{{- else }}
{{- fail "edge.publicURL (or ingress.host with the ingress enabled) is required: edge gives it out as edge_url with new credentials and issues none without it" }}
{{- end }}
{{- end }}

{{/*
Image reference of one component; call with (dict "root" $ "values" <component values>).
*/}}
{{- define "vros.image" -}}
{{- $repo := .values.image.repository }}
{{- with .root.Values.image.registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end }}
{{- $tag := .values.image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- printf "%s:%s" $repo $tag }}
{{- end }}

{{- define "vros.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vros.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Name of the Secret holding the admin token, the internal keys and the encryption key.
*/}}
{{- define "vros.secretName" -}}
{{- required "secrets.existingSecret must name a Secret created outside the chart" .Values.secrets.existingSecret }}
{{- end }}

{{/*
GOMEMLIMIT of one container: 90 % of its memory limit, in bytes. The Downward API gives the
limit only divided by a whole divisor, so the chart computes the value from the same
resources.limits.memory it renders; call with (dict "component" "edge" "limits" <limits>).
Quantities: a decimal number with an optional binary (Ki…Ei) or decimal (k…E) suffix, as
values.schema.json allows.
*/}}
{{- define "vros.goMemLimit" -}}
{{- $raw := required (printf "%s.resources.limits.memory is required" .component) (index .limits "memory") }}
{{- $bytes := 0.0 }}
{{- if or (kindIs "float64" $raw) (kindIs "int64" $raw) (kindIs "int" $raw) }}
{{- $bytes = float64 $raw }}
{{- else }}
{{- $q := toString $raw }}
{{- $m := regexFind "^[0-9]+(\\.[0-9]+)?" $q }}
{{- $unit := trimPrefix $m $q }}
{{- $mult := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 }}
{{- if or (not $m) (not (hasKey $mult $unit)) }}
{{- fail (printf "%s.resources.limits.memory %q is not a memory quantity (e.g. 512Mi)" .component $q) }}
{{- end }}
{{- $bytes = mulf (float64 $m) (index $mult $unit) }}
{{- end }}
{{- mulf $bytes 0.9 | floor | int64 }}
{{- end }}
