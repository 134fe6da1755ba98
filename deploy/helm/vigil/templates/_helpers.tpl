{{/* SPDX-License-Identifier: Apache-2.0 */}}
{{- define "vigil.fleetName" -}}
{{ .Release.Name }}-fleet
{{- end -}}
{{- define "vigil.labels" -}}
app.kubernetes.io/part-of: vigil
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
