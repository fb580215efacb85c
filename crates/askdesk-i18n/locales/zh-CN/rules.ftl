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

## 为什么不能根据回答起草规则（“制定规则”）

rules-draft-no-question = 没有可以据以制定规则的问题
rules-draft-plan = 计划审阅不会被制成规则：规则看不到计划，所以它会以同样的方式决定这个项目的每一份计划
rules-draft-same = 规则 { $name }（第 { $line } 行）已经在这里这样回答了
rules-draft-shadowed = 规则 { $name }（第 { $line } 行）已经决定了这个请求，排在它之后的规则永远不会生效：请修改那条规则，或在“规则”视图中关闭它
rules-draft-no-cwd = 代理没有说明它在哪个项目中工作（没有绝对路径的 `cwd`），所以规则没有“这里”可言
rules-draft-standing = { $label } 会授予本次会话剩余时间内的长期许可，而规则一次只回答一个调用：回答 { $once } 才能据此制定规则
rules-draft-prompt-exact = 权限提示的规则要写明确切的命令、文件或地址：更宽泛的规则会允许你没看到的内容，所以请手动编写
rules-draft-no-agent = 这个问题不是来自有名称的代理，所以规则没有“这个代理”可言
rules-draft-no-header = 这个问题没有标题
rules-draft-headers-differ = 这些问题没有共同的标题
rules-draft-nothing-varies = 问题中没有可变的部分（没有数字或名称），所以类似的问题就只有这个问题本身
rules-draft-file-unsure = 无法确定地解析文件 { $file }（没有代理文件夹的相对路径、指向不存在之处的链接、无法读取的文件夹），或者它是任何规则都不得允许修改的文件，所以不为它制定规则
rules-draft-not-http = { $url } 不是普通的 http 或 https 地址，所以不为它制定规则
rules-draft-nothing-to-narrow = 这个 { $tool } 提示没有指明可以用来限定规则的命令、文件或网址，而针对所有 { $tool } 调用的规则会全部回答它们：请每次自己回答，或手动编写规则
rules-draft-unanswered = 回答中没有 { $question } 的内容，而规则会回答每一个问题
rules-draft-skipped = 跳过的问题无法由规则跳过：规则会回答每一个问题
rules-draft-several = 一个问题中的多个选择（或选择加输入的文字）无法由一条规则给出：规则只能选一个选项或输入一段文字
rules-draft-different = 这些问题得到了不同的回答，而一条规则会给每个问题相同的回答
rules-draft-cannot = 无法起草出给出这个回答的规则（{ $why }）
rules-draft-would-not-answer = 这条规则不会回答这个请求
rules-draft-would-differ = 这条规则的回答会不同

## 为什么无法暂停或恢复规则的期限

rules-hold-no-deadline = 这个请求上已没有正在计时的规则期限：它已被回答，或者它的规则已经执行或已更改
