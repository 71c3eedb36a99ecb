
Ä µÓäá
xÅ
¸
)

apiVersions3.aws.upbound.io/v1beta1

kindBucket
Ü
metadataz*x

namex
i
ownerReferencesV2T
R*P


apiVersionv1


controller 

kindOther

nameo


uidu
4
spec,**
(
forProvider*

region	us-east-1