# 页面用语（ui/*.js 与 ui/index.html）。

language-name = 简体中文
