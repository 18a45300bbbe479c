{{/* Chart name, truncated to the 63 characters a label allows. */}}
{{- define "scim-bridge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "scim-bridge.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "scim-bridge.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels shared by every object of the release. */}}
{{- define "scim-bridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "scim-bridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Standard labels (https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/). */}}
{{- define "scim-bridge.labels" -}}
helm.sh/chart: {{ include "scim-bridge.chart" . }}
{{ include "scim-bridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: scim-bridge
{{- end }}

{{/* Labels of one component: call with (dict "root" $ "component" "api"). */}}
{{- define "scim-bridge.componentLabels" -}}
{{ include "scim-bridge.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Selector labels of one component: call with (dict "root" $ "component" "api"). */}}
{{- define "scim-bridge.componentSelectorLabels" -}}
{{ include "scim-bridge.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "scim-bridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "scim-bridge.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret whose keys become environment variables. */}}
{{- define "scim-bridge.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else }}
{{- include "scim-bridge.fullname" . }}
{{- end }}
{{- end }}

{{- define "scim-bridge.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* Environment shared by both roles. */}}
{{- define "scim-bridge.env" -}}
- name: SCIM_BRIDGE_CONFIG
  value: /etc/scim-bridge/config.yaml
- name: PORT
  value: {{ .Values.containerPort | quote }}
- name: NODE_ENV
  value: production
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* HTTPS when the process serves TLS (tls.existingSecret), else HTTP. */}}
{{- define "scim-bridge.scheme" -}}
{{- if .Values.tls.existingSecret }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}

{{/* Where the TLS Secret is mounted (outside the config volume: no nested mount in a ConfigMap). */}}
{{- define "scim-bridge.tlsDir" -}}
/etc/scim-bridge-tls
{{- end }}

{{/* The TLS Secret's mount and volume, for both roles (the config's server.tls applies to both). */}}
{{- define "scim-bridge.tlsVolumeMount" -}}
{{- if .Values.tls.existingSecret }}
- name: tls
  mountPath: {{ include "scim-bridge.tlsDir" . }}
  readOnly: true
{{- end }}
{{- end }}

{{- define "scim-bridge.tlsVolume" -}}
{{- if .Values.tls.existingSecret }}
- name: tls
  secret:
    secretName: {{ .Values.tls.existingSecret }}
    items: [{key: tls.crt, path: tls.crt}, {key: tls.key, path: tls.key}]
{{- end }}
{{- end }}

{{/*
The bridge's config file: .Values.config plus what the chart wires itself: admin.port (served on
the container port "admin") and server.tls (the mounted Secret's files).
*/}}
{{- define "scim-bridge.configFile" -}}
{{- $config := deepCopy .Values.config }}
{{- if .Values.admin.port }}
{{- $_ := set $config "admin" (merge (dict "port" .Values.admin.port) (default (dict) $config.admin)) }}
{{- end }}
{{- if .Values.tls.existingSecret }}
{{- $dir := include "scim-bridge.tlsDir" . }}
{{- $tls := dict "cert" (printf "%s/tls.crt" $dir) "key" (printf "%s/tls.key" $dir) }}
{{- $_ := set $config "server" (merge (dict "tls" $tls) (default (dict) $config.server)) }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/*
terminationGracePeriodSeconds of a role, refused when it cannot cover a graceful stop: the preStop
pause, then server.drainDelayMs and server.shutdownTimeoutMs (rounded up to seconds), then 5 s to
close the Redis clients and queues. Call with (dict "root" $ "component" "api" "grace" N "preStop" N).
*/}}
{{- define "scim-bridge.terminationGracePeriod" -}}
{{- $server := default (dict) .root.Values.config.server }}
{{- $stopMs := add (default 0 $server.drainDelayMs) (default 10000 $server.shutdownTimeoutMs) 999 }}
{{- $needed := add (default 0 .preStop) (div $stopMs 1000) 5 }}
{{- if lt (int .grace) (int $needed) }}
{{- fail (printf "%s.terminationGracePeriodSeconds is %d; it must be at least %d (preStop + drainDelayMs + shutdownTimeoutMs + 5 s)" .component (int .grace) (int $needed)) }}
{{- end }}
{{- .grace }}
{{- end }}

{{/* Probes shared by both roles: /healthz is liveness and startup, /readyz is readiness. */}}
{{- define "scim-bridge.probes" -}}
{{- $scheme := include "scim-bridge.scheme" . -}}
startupProbe:
  httpGet: {path: /healthz, port: http, scheme: {{ $scheme }}}
  periodSeconds: {{ .Values.probes.startup.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.startup.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.startup.failureThreshold }}
livenessProbe:
  httpGet: {path: /healthz, port: http, scheme: {{ $scheme }}}
  periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
readinessProbe:
  httpGet: {path: /readyz, port: http, scheme: {{ $scheme }}}
  periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
{{- end }}
