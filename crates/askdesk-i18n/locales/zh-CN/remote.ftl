# 手机服务端（crates/askdesk-remote/src）：告诉手机的话、锁屏文字、证书颁发机构页面，以及电脑端“设备”视图和 `askdesk remote` 显示的问题。

## 锁屏（push.rs）

remote-push-waiting = 有代理在等待（{ $waiting }）
remote-push-answered = 已在电脑上回答

## 手机的回答为何被拒绝（remote.rs）

remote-refusal-not-paired = 此设备未配对（或已被撤销）
remote-refusal-not-pending = 该请求已不再等待
remote-refusal-unsigned = 回答没有签名
remote-refusal-stale = 请求已更改：其摘要不匹配
remote-refusal-bad-signature = 签名与设备的密钥和此请求不匹配
remote-refusal-nonce-reused = 此随机数已被使用
remote-refusal-too-many-attempts = 对此请求的尝试次数过多
remote-refusal-expired = 请求的期限已过：由电脑决定
remote-refusal-bad-answer = 回答不符合其问题的规则：{ $reason }
remote-refusal-malformed = 消息格式有误：{ $reason }
remote-refusal-desk-only = 只有电脑能允许此操作：{ $reason }
remote-refusal-standing = 长期权限只能在电脑上授予
remote-refusal-passkey-required = 允许权限请求需要此设备的通行密钥
remote-refusal-passkeys-unavailable = 通行密钥需要电脑以域名而非地址提供服务
remote-refusal-passkey-not-allowed = 电脑现在不允许此设备注册通行密钥：请在电脑上允许
remote-refusal-no-passkey = 此设备没有通行密钥：请在电脑上允许添加
remote-refusal-bad-passkey = 通行密钥被拒绝：{ $reason }
remote-refusal-out-of-scope = 此请求超出了设备的范围
remote-refusal-rate-limited = 此设备最近批准次数过多：请在电脑上回答
remote-refusal-suspended = 此设备因签名错误已被暂停：请在电脑上重新确认
remote-refusal-unknown-push-service = { $host } 不是已知的推送服务：电脑只向这些服务发送通知
remote-refusal-internal = 电脑无法检查该设备：{ $reason }
remote-passkey-other-answer = 该通行密钥是为另一个回答请求的
remote-passkey-not-verified = 通行密钥没有验证使用者本人

## 配对（pairing.rs）

remote-pairing-bad-proof = 配对凭证与电脑上提供的任何配对都不匹配
remote-pairing-too-many-tries = 尝试次数过多：请在电脑上重新开始配对
remote-pairing-expired = 配对已过期：请在电脑上重新开始配对
remote-pairing-already-used = 此配对已被使用：请在电脑上重新开始配对
remote-pairing-not-claimed = 还没有手机认领此配对
remote-pairing-wrong-code = 代码不匹配：配对已结束，请重新开始
remote-pairing-unknown = 没有这个配对
remote-pairing-store = 无法保存该设备：{ $reason }

## 为何只有电脑能回答某个权限请求（desk_only.rs）

remote-desk-only-unreadable = 它的 { $key } 不是电脑能读取的文本
remote-desk-only-unclear = 电脑无法判断它运行的全部内容
remote-desk-only-escape = 不运行它电脑就无法读懂：{ $escape }
remote-desk-only-outside = 它涉及项目之外的位置：{ $path }
remote-desk-only-protected = 它涉及运行代码或承载信任的位置（askdesk 的规则、代理的设置或钩子、shell 的启动文件、git 的钩子或配置）
remote-desk-only-other-user = 它以另一个用户身份运行命令（{ $name }）
remote-desk-only-rm = 它会递归删除（rm）
remote-desk-only-find-delete = 它会递归删除（find -delete）
remote-desk-only-force-push = 它会强制推送（git push）
remote-desk-only-download = 它用 shell 或解释器（{ $interpreter }）运行下载的内容（{ $downloader }）
remote-desk-only-no-project = 电脑无法判断它的项目在哪里（没有绝对路径的工作目录）

## 服务端的问题，显示在“设备”视图和 `askdesk remote` 中（error.rs、devices.rs、push.rs）

remote-error-no-data-directory = 没有数据目录：请设置 XDG_DATA_HOME 或 HOME
remote-error-every-interface = 拒绝监听 { $addr }：这是所有网络接口；请选择一个地址（局域网或 tailnet 地址），或明确强制监听所有接口
remote-error-no-served-name = 没有要提供服务的名称：请给出手机将使用的地址或名称
remote-error-bad-name = { $name } 不是主机名或 IP 地址
remote-error-listen = 无法监听 { $addr }：{ $reason }
remote-error-certificate-name = 证书 { $path } 对 { $name } 无效：{ $reason }
remote-error-generate = 无法生成证书：{ $reason }
remote-error-device-store = { $path }：不是 askdesk 写入的设备列表：{ $reason }
remote-error-device-store-version = 版本 { $version }（此 askdesk 读取版本 { $reads }）
remote-error-no-certificate = 文件中没有证书
remote-quiet-hours-bad = { $text } 不是勿扰时段：请写成 HH:MM-HH:MM，例如 22:00-07:00
remote-quiet-hours-empty = { $text } 为空：勿扰时段的开始与结束相同

## 证书颁发机构页面（pages.rs，/ca）

remote-ca-title = 信任这台电脑
remote-ca-nothing = 这台电脑提供的证书来自你的手机已经信任的颁发机构：无需安装任何东西。
remote-ca-own = 这台电脑创建了自己的证书颁发机构。它只能为 { $names } 担保（它受名称约束），因此安装它只会让你的手机信任这台电脑，而不会信任其他任何东西。
remote-ca-fingerprint = 电脑证书的指纹（SHA-256，base64url）：
remote-ca-download = 下载证书颁发机构
remote-ca-ios = iPhone 和 iPad
remote-ca-ios-1 = 在 Safari 中打开此页面并轻触下载链接；允许下载描述文件。
remote-ca-ios-2 = 设置 > 通用 > VPN 与设备管理：打开 askdesk 描述文件，安装。
remote-ca-ios-3 = 设置 > 通用 > 关于本机 > 证书信任设置：为 askdesk 打开完全信任。
remote-ca-android = Android
remote-ca-android-1 = 轻触下载链接并保存文件。
remote-ca-android-2 = 设置 > 安全（或安全和隐私）> 更多安全设置 > 加密与凭据 > 安装证书 > CA 证书；选择该文件。
remote-ca-android-3 = 之后 Chrome 会信任它；有些应用不使用用户证书。
remote-ca-remove = 以后要移除它：在相同的设置页面中选择移除或删除。

## 安装后的页面描述（manifest.webmanifest）

remote-manifest-description = 回答你的代理在电脑上提出的问题。

## An answer whose pictures, re-encoded, make it longer than the host passes on

remote-answer-too-big = 图片重新编码后，这个回答有 { $bytes } 字节，超过了本机可转交的 { $max } 字节上限（answer-bytes）：请少发或发更小的图片
