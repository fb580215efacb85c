# 手机页面的文字（crates/askdesk-remote/page：app.js、passkey.js、push.js、index.html），由电脑端以其语言发给页面。
# 代理提供的文字从不在此翻译。

## 框架与配对

phone-loading = 正在加载…
phone-default-name = 我的手机
phone-pair-title = 与这台电脑配对
phone-pair-text = 这部手机将能回答你的代理在电脑上提出的问题。
phone-pair-name = 这部手机的名称
phone-pair-button = 配对这部手机
phone-pair-bad-proof = 电脑不认识这个配对链接。请在电脑上重新开始。
phone-pair-too-many-tries = 尝试次数过多：请在电脑上重新开始。
phone-pair-expired = 这个配对链接已过期。请在电脑上重新开始。
phone-pair-already-used = 这个配对链接已被使用。请在电脑上重新开始。
phone-pair-refused = 电脑拒绝了配对（{ $status }）。
phone-confirm-title = 在电脑上确认
phone-confirm-text = 请核对电脑上显示的是这个代码，并在电脑上确认：
phone-confirm-then = 电脑确认后，此页面会打开问题。
phone-not-confirmed-title = 电脑没有确认
phone-not-confirmed-text = 代码没有及时在电脑上确认，或确认的不是这部手机显示的代码。请从电脑上重新配对。
phone-not-paired = 未配对
phone-not-paired-title = 这部手机未配对
phone-not-paired-text = 电脑不认识这部手机（或已将其撤销）。请从电脑上重新配对。
phone-unpaired-title = 从电脑上配对这部手机
phone-unpaired-text = 在电脑上：打开“设备”，然后“添加手机”（或运行 askdesk remote --pair），再在这部手机上打开它显示的链接。
phone-install-authority = 安装这台电脑的证书颁发机构

## 连接

phone-connecting = 正在连接…
phone-connected = 已连接为 { $device }
phone-unreachable = 自 { $time } 起无法连接电脑

## 请求

phone-nothing-waiting = 没有等待中的请求。
phone-an-agent = 一个代理
phone-send = 发送
phone-dismiss = 忽略
phone-remove = 移除
phone-skip = 跳过
phone-recommended = 推荐
phone-choose-any = 可多选
phone-other = 其他…
    .aria-label = 其他
phone-your-answer = 你的回答…
    .aria-label = 其他
phone-expires-in = { $left } 后过期
phone-expired = 已过期

## 审阅计划

phone-feedback = 给代理的反馈…
    .aria-label = 反馈
phone-send-feedback = 发送反馈
phone-comment-on = 关于 { $block }
    .aria-label = 评论 { $block }
phone-tap-to-comment = 轻触计划的某一部分即可评论。
phone-comments-are-feedback = 评论会作为反馈发回：请发送它们，或删除它们后再批准。
phone-version = 第 { $version } 版 ·{" "}
phone-changes-since = 自第 { $since } 版以来的更改{" "}
phone-no-changes-since = 自第 { $since } 版以来没有更改

## 请求的结果（每行以发生的时间结尾）

phone-sending = 正在发送…
phone-ended = { $why } { $time }
phone-sent = 已发送 { $time }
phone-lost = 已发送，但电脑在确认前断开了：请在电脑上查看 { $time }
phone-claimed = 已在另一台设备上回答…
phone-gone = 已不再等待…
phone-answered-on = 已在 { $device } 上回答
phone-answered-on-desk = 已在电脑上回答
phone-withdrawn = 代理已撤回
phone-no-longer-waiting = 已不再等待
phone-not-sent = 未发送：{ $reason }
phone-not-sent-unreachable = 未发送：无法连接电脑

## 通行密钥与权限请求

phone-passkey-title = 这部手机的通行密钥
phone-passkey-text = 电脑允许这部手机在几分钟内添加通行密钥。有了它（每次使用你的指纹、面容或 PIN），这部手机就能允许代理的权限请求。
phone-passkey-add = 添加通行密钥
phone-passkey-replace = 更换这部手机的通行密钥
phone-passkey-waiting = 正在等待你的指纹、面容或 PIN…
phone-passkey-added = 已添加通行密钥：这部手机可以允许权限请求。
phone-passkey-failed = 未添加通行密钥：{ $reason }
phone-command-more =
    { $hidden ->
       *[other] … 还有 { $hidden } 个字符 …
    }
phone-command-whole =
    { $lines ->
       *[other] 显示完整命令（{ $lines } 行）
    }
phone-command-short = 只显示开头和结尾
phone-desk-only = 只有电脑能回答这个请求：{ $reason }
phone-only-at-desk = 只能在电脑上
phone-passkey-needs-name = 通行密钥需要电脑以域名提供服务
phone-passkey-needed = 需要通行密钥：请在电脑上允许添加
phone-permission-prompt = 权限请求
phone-fact-tool = 工具
phone-fact-agent = 代理
phone-fact-cwd = 工作目录
phone-fact-path = 路径
phone-fact-command = 命令

## 唤醒手机（push.js）

phone-push-unsupported = 这个浏览器无法在有问题等待时唤醒手机。
phone-push-failed = 这部手机不会被唤醒：{ $reason }。
phone-push-denied = 此页面的通知已关闭：手机不会被唤醒。
phone-push-allow = 有问题等待时唤醒这部手机
phone-push-setting-up = 正在设置通知…
phone-push-on = 有问题等待时会唤醒这部手机。
phone-push-no-answer = 浏览器的推送服务没有响应
phone-push-no-key = 电脑没有提供其密钥（{ $status }）
phone-push-refused = 电脑拒绝了它（{ $reason }）

## Answering with a picture
phone-picture-add = 添加图片
phone-picture-remove = 移除
phone-picture-named = { $name } · { $kib } KiB
phone-picture-unnamed = 图片 · { $kib } KiB
phone-picture-unreadable = 这部手机无法读取这张图片
phone-picture-not-with-approve = 图片会作为反馈发回：请发送，或移除后再批准。
