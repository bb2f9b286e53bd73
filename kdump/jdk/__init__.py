"""Java compatibility: the one home of the JDK's and Scala's behaviour kdump must reproduce byte for byte
(the JDK's UTF-8 decoding in :mod:`kdump.jdk.text`, ``String.split``, ``String.hashCode``, ``int`` wrap-around and
Scala's ``HashMap`` order in :mod:`kdump.jdk.collections`, ``java.util.Base64``'s URL decoder in
:mod:`kdump.jdk.base64`).

A leaf package: it imports nothing from kdump, so every layer (storage included) may use it.
"""
