# 回答规则自己的用语，供命令行、桌面应用和日志共用：规则做什么，以及规则有何风险。
# 规则的名称、回答和消息保持规则文件中的原文。

## 规则做什么

rules-action-answer = 回答 { $label }
rules-action-recommended = 回答推荐的选项
rules-action-text = 以文字 { $text } 回答
rules-action-ask = 询问你
rules-verdict-deny = 拒绝（{ $message }）
rules-verdict-dismiss = 驳回（{ $message }）

## 加载的规则有何风险

rules-warning-empty-match = 规则 { $name }（第 { $line } 行）的匹配条件为空：它会回答所有符合的请求，不论来自哪个代理、哪个项目（权限提示和计划审阅除外）；请为它加上 `match`
rules-broad-allow = 它也会允许这些程序自己运行的一切：由解释器或构建工具运行的文件（`python3 x.py`、`make`、`npm test`）、从文件或输入读取的代码，以及会运行代码的选项（`awk` 的 `system()`、`sed` 的 `e`、仓库自带的 git 钩子、别名和过滤器）；askdesk 只拒绝它所知道的包装命令、内联代码和 git 设置
rules-warning-broad-allow = 规则 { $name }（第 { $line } 行）宽泛地允许命令：{ rules-broad-allow }
