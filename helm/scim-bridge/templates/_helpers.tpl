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

{{/* Probes shared by both roles: /healthz is liveness and startup, /readyz is readiness. */}}
{{- define "scim-bridge.probes" -}}
startupProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: {{ .Values.probes.startup.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.startup.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.startup.failureThreshold }}
livenessProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
readinessProbe:
  httpGet: {path: /readyz, port: http}
  periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
{{- end }}
